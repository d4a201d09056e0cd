package io.outbox4j.cli;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/**
 * A small JSON writer for the {@code --json} output: objects are {@link Map}s (in their iteration
 * order), arrays are {@link Collection}s, and strings, numbers, booleans, instants (ISO-8601 text),
 * durations (seconds as a number) and null/empty optionals (null) are values.
 */
final class Json {
    private Json() {}

    static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value);
        return b.toString();
    }

    private static void write(StringBuilder b, Object value) {
        if (value instanceof Optional<?> o) {
            value = o.orElse(null);
        }
        if (value == null) {
            b.append("null");
        } else if (value instanceof Map<?, ?> map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                string(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (value instanceof Collection<?> list) {
            b.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                write(b, item);
            }
            b.append(']');
        } else if (value instanceof Number || value instanceof Boolean) {
            b.append(value);
        } else if (value instanceof Duration d) {
            string(b, d.toString()); // ISO-8601, as every JSON of outbox4j
        } else if (value instanceof Instant i) {
            string(b, i.toString());
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
                    if (c < 0x20 || c == 0x2028 || c == 0x2029 || c == 0x7f) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
