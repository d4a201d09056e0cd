package io.outbox4j.spring.boot;

import io.outbox4j.engine.RelaySetting;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Startup checks of the {@code outbox4j.*} properties. A bad value fails the start with Boot's
 * "Invalid value ... for configuration property ..." report, which names the property, the value,
 * where it came from and why it is wrong.
 */
final class Checks {
    private Checks() {}

    static String name(String suffix) {
        return OutboxProperties.PREFIX + "." + suffix;
    }

    static InvalidConfigurationPropertyValueException invalid(
            String suffix, @Nullable Object value, String reason) {
        return new InvalidConfigurationPropertyValueException(name(suffix), value, reason);
    }

    static InvalidConfigurationPropertyValueException invalid(
            String suffix, @Nullable Object value, Throwable rejected) {
        return invalid(suffix, value, String.valueOf(rejected.getMessage()));
    }

    /**
     * Checks a relay property against its one definition ({@link RelaySetting}): {@code
     * outbox4j.<prefix>.<key>} must be between its bounds.
     */
    static <T extends Comparable<T>> T setting(String prefix, RelaySetting<T> setting, T value) {
        Optional<String> problem = setting.problem(value);
        if (problem.isPresent()) {
            throw invalid(prefix + "." + setting.key(), value, problem.get());
        }
        return value;
    }

    static Duration positive(String suffix, @Nullable Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw invalid(suffix, value, "must be a positive duration such as 500ms or 30s");
        }
        return value;
    }

    static Duration notNegative(String suffix, @Nullable Duration value) {
        if (value == null || value.isNegative()) {
            throw invalid(suffix, value, "must be zero or a positive duration such as 30s");
        }
        return value;
    }

    static @Nullable String text(@Nullable String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }

    /**
     * The text of a property that must be given: {@code value} stripped, or a failed start naming
     * {@code outbox4j.<suffix>} when it is missing or blank.
     */
    static String required(String suffix, @Nullable String value, String reason) {
        String text = text(value);
        if (text == null) {
            throw invalid(suffix, null, reason);
        }
        return text;
    }

    static String format(Duration d) {
        if (d.toMillis() % 60_000 == 0 && d.toMinutes() > 0) {
            return d.toMinutes() + "m";
        }
        if (d.toMillis() % 1000 == 0) {
            return d.toSeconds() + "s";
        }
        return d.toMillis() + "ms";
    }
}
