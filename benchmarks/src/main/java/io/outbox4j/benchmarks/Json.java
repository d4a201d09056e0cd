package io.outbox4j.benchmarks;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the few JSON shapes the results need (objects, arrays, strings, numbers, booleans) on one
 * line.
 */
final class Json {
    private Json() {}

    /**
     * Renders a value.
     *
     * @param value a {@link Map} with string keys, a {@link Collection}, a {@link CharSequence}, a
     *     {@link Number}, a {@link Boolean} or {@code null}
     * @return its JSON text
     */
    static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value);
        return b.toString();
    }

    private static void write(StringBuilder b, Object value) {
        if (value == null) {
            b.append("null");
        } else if (value instanceof Map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                string(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (value instanceof Collection) {
            b.append('[');
            boolean first = true;
            for (Object o : (Collection<?>) value) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                write(b, o);
            }
            b.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                b.append("null");
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                b.append((long) d);
            } else {
                b.append(String.format(Locale.ROOT, "%.4f", d).replaceAll("0+$", ""));
            }
        } else if (value instanceof Number || value instanceof Boolean) {
            b.append(value);
        } else {
            string(b, value.toString());
        }
    }

    private static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
