package io.outbox4j.cli.internal;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Settings of the outbox4j commands, from three places: a properties file ({@code --config}), the
 * environment ({@code OUTBOX4J_} + the key in upper case with dots and dashes as underscores, e.g.
 * {@code OUTBOX4J_RELAY_BATCH_SIZE} for {@code relay.batch-size}), and the command line. The
 * command line wins over the environment, the environment over the file.
 *
 * <p>Every typed getter checks the value and throws a {@link SettingsException} that names the key,
 * where the value came from and what is allowed.
 */
public final class Settings {
    /** The prefix of every environment variable read as a setting. */
    public static final String ENV_PREFIX = "OUTBOX4J_";

    private static final Pattern SIMPLE_DURATION =
            Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)", Pattern.CASE_INSENSITIVE);

    private record Value(String value, String source) {}

    private final Map<String, Value> file = new LinkedHashMap<>();
    private final Map<String, String> env;
    private final Map<String, Value> commandLine = new LinkedHashMap<>();
    private final String fileName;

    private Settings(Map<String, String> env, String fileName) {
        this.env = Map.copyOf(env);
        this.fileName = fileName;
    }

    /**
     * Settings from the environment only.
     *
     * @param env the environment, usually {@code System.getenv()}
     * @return the settings
     */
    public static Settings fromEnvironment(Map<String, String> env) {
        return new Settings(env, "");
    }

    /**
     * Settings from a properties file (UTF-8) and the environment.
     *
     * @param file the file
     * @param env the environment, usually {@code System.getenv()}
     * @return the settings
     * @throws SettingsException if the file cannot be read
     */
    public static Settings load(Path file, Map<String, String> env) {
        Settings s = new Settings(env, file.toString());
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (NoSuchFileException e) {
            throw new SettingsException("config file " + file + " does not exist");
        } catch (IOException | IllegalArgumentException e) {
            throw new SettingsException("cannot read config file " + file + ": " + e.getMessage());
        }
        for (String key : new TreeSet<>(p.stringPropertyNames())) {
            s.file.put(key.strip(), new Value(p.getProperty(key).strip(), file.toString()));
        }
        return s;
    }

    /**
     * Sets a value from the command line; it wins over the environment and the file.
     *
     * @param key the setting key
     * @param value the value
     * @param option the option it came from, for error messages (e.g. {@code --store})
     */
    public void set(String key, String value, String option) {
        commandLine.put(key, new Value(value.strip(), option));
    }

    /**
     * The environment variable of a key.
     *
     * @param key a key such as {@code relay.batch-size}
     * @return the variable, such as {@code OUTBOX4J_RELAY_BATCH_SIZE}
     */
    public static String envName(String key) {
        return ENV_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private Optional<Value> value(String key) {
        Value v = commandLine.get(key);
        if (v == null) {
            String name = envName(key);
            String e = env.get(name);
            if (e != null && !e.isBlank()) {
                v = new Value(e.strip(), "environment variable " + name);
            }
        }
        if (v == null) {
            v = file.get(key);
        }
        return v == null || v.value().isEmpty() ? Optional.empty() : Optional.of(v);
    }

    /**
     * A text setting.
     *
     * @param key the key
     * @return the value, empty if not set or blank
     */
    public Optional<String> text(String key) {
        return value(key).map(Value::value);
    }

    /**
     * A text setting that must be there.
     *
     * @param key the key
     * @param hint how to set it, appended to the error message
     * @return the value
     * @throws SettingsException if it is not set
     */
    public String required(String key, String hint) {
        return text(key)
                .orElseThrow(
                        () ->
                                new SettingsException(
                                        key
                                                + " is not set; "
                                                + hint
                                                + " (or "
                                                + envName(key)
                                                + ")"));
    }

    /**
     * Describes where a key's value came from, for messages.
     *
     * @param key the key
     * @return e.g. {@code relay.properties} or {@code environment variable OUTBOX4J_STORE_URL}
     */
    public String source(String key) {
        return value(key).map(Value::source).orElse("default");
    }

    /**
     * A whole-number setting.
     *
     * @param key the key
     * @param defaultValue the value when not set
     * @param min the smallest allowed value
     * @param max the largest allowed value
     * @return the value
     * @throws SettingsException if it is not a whole number in range
     */
    public int integer(String key, int defaultValue, int min, int max) {
        return optionalInteger(key, min, max).orElse(defaultValue);
    }

    /**
     * A whole-number setting without a default.
     *
     * @param key the key
     * @param min the smallest allowed value
     * @param max the largest allowed value
     * @return the value, empty when not set
     * @throws SettingsException if it is not a whole number in range
     */
    public Optional<Integer> optionalInteger(String key, int min, int max) {
        Optional<Value> v = value(key);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        String s = v.get().value().replace("_", "");
        int n;
        try {
            n = Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw bad(key, v.get(), "a whole number between " + min + " and " + max);
        }
        if (n < min || n > max) {
            throw bad(key, v.get(), "a whole number between " + min + " and " + max);
        }
        return Optional.of(n);
    }

    /**
     * A duration setting: a number with a unit ({@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h},
     * {@code 1d}) or ISO-8601 ({@code PT30S}).
     *
     * @param key the key
     * @param min the shortest allowed value
     * @param max the longest allowed value
     * @return the value, empty when not set
     * @throws SettingsException if it is malformed or out of range
     */
    public Optional<Duration> duration(String key, Duration min, Duration max) {
        Optional<Value> v = value(key);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        String allowed =
                "a duration between "
                        + format(min)
                        + " and "
                        + format(max)
                        + ", such as 500ms, 30s, 5m, 2h or 1d";
        Duration d = parseDuration(v.get().value());
        if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw bad(key, v.get(), allowed);
        }
        return Optional.of(d);
    }

    /**
     * A yes/no setting: {@code true} or {@code false}.
     *
     * @param key the key
     * @param defaultValue the value when not set
     * @return the value
     * @throws SettingsException if it is neither
     */
    public boolean flag(String key, boolean defaultValue) {
        Optional<Value> v = value(key);
        if (v.isEmpty()) {
            return defaultValue;
        }
        return switch (v.get().value().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw bad(key, v.get(), "true or false");
        };
    }

    /**
     * Every setting under a prefix that is passed on as it is (such as Kafka producer properties
     * under {@code publisher.kafka.}), with the prefix removed. From the environment, {@code
     * OUTBOX4J_PUBLISHER_KAFKA_SECURITY_PROTOCOL} becomes {@code security.protocol}: underscores
     * become dots, letters lower case.
     *
     * @param prefix the prefix, ending in a dot
     * @return name to value, file first, then the environment, then the command line
     */
    public Map<String, String> passthrough(String prefix) {
        Map<String, String> out = new TreeMap<>();
        file.forEach(
                (k, v) -> {
                    if (k.startsWith(prefix) && k.length() > prefix.length()) {
                        out.put(k.substring(prefix.length()), v.value());
                    }
                });
        String envPrefix = envName(prefix);
        env.forEach(
                (k, v) -> {
                    if (k.startsWith(envPrefix) && k.length() > envPrefix.length()) {
                        out.put(
                                k.substring(envPrefix.length())
                                        .toLowerCase(Locale.ROOT)
                                        .replace('_', '.'),
                                v.strip());
                    }
                });
        commandLine.forEach(
                (k, v) -> {
                    if (k.startsWith(prefix) && k.length() > prefix.length()) {
                        out.put(k.substring(prefix.length()), v.value());
                    }
                });
        return out;
    }

    /**
     * Rejects settings nobody reads: keys of the file and of the command line that are not known
     * (all of them, or only those in the given sections), and environment variables under one of
     * the sections ({@code OUTBOX4J_RELAY_…}) that match no key. Other {@code OUTBOX4J_} variables
     * are left alone (the tests' server variables share the prefix).
     *
     * @param known every key the command reads
     * @param passthroughPrefixes prefixes passed on as they are (e.g. {@code publisher.kafka.})
     * @param sections the sections checked (e.g. {@code relay.})
     * @param everyFileKey whether a file key outside the sections is unknown too
     * @throws SettingsException naming every unknown setting and the known ones
     */
    public void rejectUnknown(
            Collection<String> known,
            Collection<String> passthroughPrefixes,
            Collection<String> sections,
            boolean everyFileKey) {
        List<String> unknown = new ArrayList<>();
        Map<String, String> knownEnv = new HashMap<>();
        for (String k : known) {
            knownEnv.put(envName(k), k);
        }
        for (Map<String, Value> m : List.of(file, commandLine)) {
            m.forEach(
                    (k, v) -> {
                        if ((everyFileKey || underAny(k, sections))
                                && !known.contains(k)
                                && !underAny(k, passthroughPrefixes)) {
                            unknown.add(k + " (" + v.source() + ")");
                        }
                    });
        }
        for (String name : new TreeSet<>(env.keySet())) {
            boolean inSection = false;
            for (String section : sections) {
                inSection |= name.startsWith(envName(section));
            }
            boolean passthrough = false;
            for (String p : passthroughPrefixes) {
                passthrough |= name.startsWith(envName(p));
            }
            if (inSection && !passthrough && !knownEnv.containsKey(name)) {
                unknown.add(name + " (environment)");
            }
        }
        if (!unknown.isEmpty()) {
            throw new SettingsException(
                    "unknown setting"
                            + (unknown.size() > 1 ? "s " : " ")
                            + String.join(", ", unknown)
                            + "; known settings: "
                            + String.join(", ", new TreeSet<>(known))
                            + (passthroughPrefixes.isEmpty()
                                    ? ""
                                    : ", and anything under "
                                            + String.join(", ", passthroughPrefixes)));
        }
    }

    private static boolean underAny(String key, Collection<String> prefixes) {
        for (String p : prefixes) {
            if (key.startsWith(p) && key.length() > p.length()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The config file these settings were read from.
     *
     * @return the file name, empty when there is none
     */
    public String fileName() {
        return fileName;
    }

    private static SettingsException bad(String key, Value v, String allowed) {
        return new SettingsException(
                key + " must be " + allowed + ", but was '" + v.value() + "' (" + v.source() + ")");
    }

    /**
     * Parses {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 1d} or ISO-8601.
     *
     * @param text the text
     * @return the duration, or {@code null} if the text is neither
     */
    public static @Nullable Duration parseDuration(String text) {
        String t = text.strip();
        Matcher m = SIMPLE_DURATION.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2).toLowerCase(Locale.ROOT)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        try {
            return Duration.parse(t);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /**
     * Formats a duration the way settings are written: {@code 250ms}, {@code 30s}, {@code 5m},
     * {@code 2h}, {@code 1d}, or a combination such as {@code 1m30s}.
     *
     * @param d the duration
     * @return the text
     */
    public static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        StringBuilder b = new StringBuilder();
        long days = d.toDays();
        long hours = d.toHoursPart();
        long minutes = d.toMinutesPart();
        long seconds = d.toSecondsPart();
        long millis = d.toMillisPart();
        if (days > 0) {
            b.append(days).append('d');
        }
        if (hours > 0) {
            b.append(hours).append('h');
        }
        if (minutes > 0) {
            b.append(minutes).append('m');
        }
        if (seconds > 0) {
            b.append(seconds).append('s');
        }
        if (millis > 0) {
            b.append(millis).append("ms");
        }
        return b.length() == 0 ? d.toString() : b.toString();
    }
}
