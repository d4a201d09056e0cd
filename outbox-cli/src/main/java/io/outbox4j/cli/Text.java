package io.outbox4j.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** Formatting for people: one-line text without control characters, short times and ages. */
final class Text {
    private Text() {}

    /**
     * Replaces line breaks and other control characters (a terminal would act on them) with a space
     * or {@code ?}.
     */
    static String oneLine(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n' || c == '\r' || c == '\t') {
                b.append(' ');
            } else if (Character.isISOControl(c) || c == 0x2028 || c == 0x2029) {
                b.append('?');
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** Like {@link #oneLine} but keeps line breaks and tabs (for a payload printed on request). */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n' || c == '\t') {
                b.append(c);
            } else if (Character.isISOControl(c)) {
                b.append('?');
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * Shortens fully qualified exception names to their simple names ({@code
     * io.outbox4j.api.RetryableFailureException: x} becomes {@code RetryableFailureException: x}),
     * so a table cell keeps the part of a reason that says what happened.
     */
    static String simpleClassNames(String s) {
        return s.replaceAll(
                "\\b(?:[a-z][a-z0-9_]*\\.)+([A-Z][A-Za-z0-9_$]*(?:Exception|Error))", "$1");
    }

    static String truncate(String s, int max) {
        String one = oneLine(s);
        return one.length() <= max ? one : one.substring(0, max - 1) + "…";
    }

    /** An instant to the second, e.g. {@code 2026-12-03T07:55:01Z}. */
    static String time(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** A short age: {@code 450ms}, {@code 12s}, {@code 3m05s}, {@code 2h10m}, {@code 4d03h}. */
    static String age(Duration d) {
        if (d.isZero() || d.isNegative()) {
            return "-";
        }
        long s = d.toSeconds();
        if (s < 1) {
            return d.toMillis() + "ms";
        }
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format("%dm%02ds", s / 60, s % 60);
        }
        if (s < 86_400) {
            return String.format("%dh%02dm", s / 3600, (s % 3600) / 60);
        }
        return String.format("%dd%02dh", s / 86_400, (s % 86_400) / 3600);
    }
}
