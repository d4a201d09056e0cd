package io.outbox4j.store.jdbi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Encodes ordered headers into one text column and back, exactly, without a JSON library.
 *
 * <p>Format: one {@code name=value} line per header, each ending in {@code \n}, in map order.
 * Inside a name or value the characters {@code %}, {@code =}, {@code \n}, NUL (which PostgreSQL
 * text refuses) and unpaired surrogates (which UTF-8 cannot carry) are written as {@code %XXXX},
 * the UTF-16 code unit in hex. Everything else is kept as is, so the text stays readable for
 * operators.
 */
final class HeaderCodec {
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private HeaderCodec() {}

    static String encode(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> e : headers.entrySet()) {
            escape(e.getKey(), out);
            out.append('=');
            escape(e.getValue(), out);
            out.append('\n');
        }
        return out.toString();
    }

    static Map<String, String> decode(String text) {
        if (text == null || text.isEmpty()) {
            return Map.of();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            int eq = text.indexOf('=', start);
            if (end < 0 || eq < 0 || eq > end) {
                throw new IllegalStateException("malformed headers column at offset " + start);
            }
            headers.put(unescape(text, start, eq), unescape(text, eq + 1, end));
            start = end + 1;
        }
        return Collections.unmodifiableMap(headers);
    }

    private static void escape(String s, StringBuilder out) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired =
                    Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1));
            if (paired) {
                out.append(c).append(s.charAt(++i));
            } else if (c == '%' || c == '=' || c == '\n' || c == 0 || Character.isSurrogate(c)) {
                out.append('%')
                        .append(HEX[c >> 12 & 15])
                        .append(HEX[c >> 8 & 15])
                        .append(HEX[c >> 4 & 15])
                        .append(HEX[c & 15]);
            } else {
                out.append(c);
            }
        }
    }

    private static String unescape(String text, int from, int to) {
        int pct = text.indexOf('%', from);
        if (pct < 0 || pct >= to) {
            return text.substring(from, to);
        }
        StringBuilder out = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c == '%') {
                if (i + 4 >= to) {
                    throw new IllegalStateException(
                            "malformed escape in headers column at offset " + i);
                }
                out.append((char) Integer.parseInt(text, i + 1, i + 5, 16));
                i += 4;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * Replaces NUL and unpaired surrogates, which some databases cannot store in text, with U+FFFD.
     */
    static String storableText(String s) {
        if (firstUnstorable(s) < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                out.append(c).append(s.charAt(++i));
            } else {
                out.append(c == 0 || Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

    /**
     * Returns the index of the first NUL or unpaired surrogate, or -1 when the text is storable as
     * is.
     */
    static int firstUnstorable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (c == 0 || Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }
}
