package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The DDL resources: loads a dialect's script and renames its table and index names for a
 * configured table.
 */
final class Schema {
    private static final int MAX_IDENTIFIER = 63;

    private Schema() {}

    /**
     * Returns the statements of a dialect's DDL script for a table.
     *
     * @param dialect the dialect
     * @param tableName a name already validated against {@link SqlDialect#TABLE_NAME}
     * @return the statements, in order, without comments or the terminating semicolons
     */
    static List<String> statements(Dialect dialect, String tableName) {
        String script = load(dialect.ddlResource());
        char q = dialect.quote();
        Matcher m =
                Pattern.compile(
                                Pattern.quote(q + JdbiOutboxStore.DEFAULT_TABLE_NAME)
                                        + "([a-z_]*)"
                                        + Pattern.quote(String.valueOf(q)))
                        .matcher(script);
        StringBuilder renamed = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(
                    renamed, Matcher.quoteReplacement(q + objectName(tableName, m.group(1)) + q));
        }
        m.appendTail(renamed);
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : renamed.toString().split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String statement = current.toString().strip();
                statements.add(statement.substring(0, statement.length() - 1));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            statements.add(current.toString().strip());
        }
        return statements;
    }

    /**
     * Names an object derived from the table (an index, a constraint): {@code table + suffix},
     * shortened with a hash of the table name when that would pass the 63-character identifier
     * limit.
     */
    static String objectName(String tableName, String suffix) {
        String name = tableName + suffix;
        if (name.length() <= MAX_IDENTIFIER) {
            return name;
        }
        String hash = String.format(Locale.ROOT, "%08x", tableName.hashCode());
        return tableName.substring(0, MAX_IDENTIFIER - suffix.length() - hash.length() - 1)
                + "_"
                + hash
                + suffix;
    }

    private static String load(String resource) {
        try (InputStream in = Schema.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(
                        "DDL resource " + resource + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read DDL resource " + resource, e);
        }
    }
}
