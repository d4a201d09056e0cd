package io.outbox4j.api;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;

/** Argument checks shared by the value types; every message names the field and the problem. */
final class Checks {
    private Checks() {}

    static <T> T notNull(@Nullable T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        return value;
    }

    /**
     * A non-blank text of at most {@code max} characters, without control characters or outer
     * spaces.
     */
    static String text(@Nullable String value, String field, int max) {
        value = notNull(value, field);
        if (value.isBlank()) {
            throw new IllegalArgumentException(
                    field + " must not be blank, but was '" + value + "'");
        }
        if (value.length() > max) {
            throw new IllegalArgumentException(
                    field + " is " + value.length() + " characters, over the " + max + " limit");
        }
        if (!value.strip().equals(value)) {
            throw new IllegalArgumentException(
                    field + " must not start or end with whitespace, but was '" + value + "'");
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(
                        field
                                + " must not contain control characters (found U+"
                                + String.format("%04X", (int) value.charAt(i))
                                + " at index "
                                + i
                                + ")");
            }
        }
        return value;
    }

    static int atLeast(int value, int min, String field) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be >= " + min + ", but was " + value);
        }
        return value;
    }

    static Duration positive(@Nullable Duration value, String field) {
        value = notNull(value, field);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(field + " must be positive, but was " + value);
        }
        return value;
    }

    /**
     * Truncates to microseconds, the finest precision every supported store keeps, so that what is
     * stored is exactly what is read back.
     */
    static Instant micros(@Nullable Instant value, String field) {
        return notNull(value, field).truncatedTo(ChronoUnit.MICROS);
    }

    static java.util.List<String> receipts(java.util.@Nullable List<String> receipts) {
        receipts = notNull(receipts, "receipts");
        if (receipts.isEmpty()) {
            throw new IllegalArgumentException("receipts must not be empty");
        }
        for (String r : receipts) {
            text(r, "receipt", 512);
        }
        return java.util.List.copyOf(receipts);
    }
}
