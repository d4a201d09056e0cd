package io.outbox4j.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;

/**
 * Builds one HTML page. Every piece of text goes through {@link #text} or {@link #attr}, which
 * escape it; only the page's own markup is appended raw.
 */
final class Html {
    private final StringBuilder out = new StringBuilder(4096);

    /** Escapes text for an HTML element's content or a double-quoted attribute value. */
    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                case '`' -> b.append("&#96;");
                default -> {
                    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
                        b.append('\uFFFD'); // control characters are not valid in HTML text
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    /** Percent-encodes a query parameter value. */
    static String urlParam(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A URL: path plus query parameters (empty values left out), not yet HTML-escaped. */
    static String url(String path, Map<String, String> params) {
        StringBuilder b = new StringBuilder(path);
        char sep = '?';
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            b.append(sep).append(urlParam(e.getKey())).append('=').append(urlParam(e.getValue()));
            sep = '&';
        }
        return b.toString();
    }

    Html raw(String markup) {
        out.append(markup);
        return this;
    }

    Html text(String text) {
        out.append(escape(text));
        return this;
    }

    /** An attribute, {@code name="escaped value"}, preceded by a space. */
    Html attr(String name, String value) {
        out.append(' ').append(name).append("=\"").append(escape(value)).append('"');
        return this;
    }

    /** An element with escaped text content. */
    Html el(String tag, String text) {
        out.append('<').append(tag).append('>').append(escape(text));
        out.append("</").append(tag).append('>');
        return this;
    }

    Html link(String href, String text) {
        out.append("<a");
        attr("href", href);
        out.append('>').append(escape(text)).append("</a>");
        return this;
    }

    Html hidden(String name, String value) {
        out.append("<input type=\"hidden\"");
        attr("name", name);
        attr("value", value);
        out.append('>');
        return this;
    }

    @Override
    public String toString() {
        return out.toString();
    }

    /** {@code 2026-12-05 10:04:31Z}: readable, to the second, UTC. */
    static String time(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString().replace('T', ' ');
    }

    /** {@code 3d 4h}, {@code 5m 2s}, {@code 850ms}: the two largest units. */
    static String age(Duration d) {
        if (d.isNegative()) {
            d = Duration.ZERO;
        }
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        long s = d.toSeconds();
        long days = s / 86400;
        long hours = s % 86400 / 3600;
        long minutes = s % 3600 / 60;
        long seconds = s % 60;
        if (days > 0) {
            return days + "d " + hours + "h";
        }
        if (hours > 0) {
            return hours + "h " + minutes + "m";
        }
        if (minutes > 0) {
            return minutes + "m " + seconds + "s";
        }
        return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }
}
