package io.outbox4j.store.jdbi;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;

/**
 * One SQL text with {@code :named} parameters, prepared straight on a handle's JDBC connection.
 *
 * <p>The relay's hot paths (claim, complete, extend) run through this instead of Jdbi's statements:
 * in the latency benchmark Jdbi's per-statement machinery (binding by name, parsing and templating
 * the text on every call, the statement context) took about four fifths of a relay's CPU in the
 * store, the JDBC driver the rest. The text is parsed once, here; the statements still run on a
 * Jdbi handle, so transactions, the pool and the error handling of {@link Db} stay the same.
 */
final class Sql {
    private final String text;
    private final Map<String, List<Integer>> positions;

    private Sql(String text, Map<String, List<Integer>> positions) {
        this.text = text;
        this.positions = positions;
    }

    /**
     * Parses {@code :name} parameters (outside quotes; {@code ::} is left alone) into JDBC's {@code
     * ?}.
     */
    static Sql named(String sql) {
        StringBuilder out = new StringBuilder(sql.length());
        Map<String, List<Integer>> positions = new HashMap<>();
        int index = 0;
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"') {
                int end = sql.indexOf(c, i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("unterminated quote in: " + sql);
                }
                out.append(sql, i, end + 1);
                i = end;
            } else if (c == ':' && i + 1 < sql.length() && sql.charAt(i + 1) == ':') {
                out.append("::");
                i++;
            } else if (c == ':'
                    && i + 1 < sql.length()
                    && Character.isJavaIdentifierStart(sql.charAt(i + 1))) {
                int end = i + 1;
                while (end < sql.length() && Character.isJavaIdentifierPart(sql.charAt(end))) {
                    end++;
                }
                positions
                        .computeIfAbsent(sql.substring(i + 1, end), n -> new ArrayList<>())
                        .add(++index);
                out.append('?');
                i = end - 1;
            } else {
                out.append(c);
            }
        }
        return new Sql(out.toString(), Map.copyOf(positions));
    }

    /** Prepares the statement on the handle's connection; the caller closes it. */
    Bound prepare(Handle h) throws SQLException {
        Connection c = h.getConnection();
        return new Bound(c, c.prepareStatement(text));
    }

    /** A prepared statement whose parameters are set by name. */
    final class Bound implements AutoCloseable {
        private final Connection connection;
        final PreparedStatement statement;

        private Bound(Connection connection, PreparedStatement statement) {
            this.connection = connection;
            this.statement = statement;
        }

        private List<Integer> at(String name) {
            List<Integer> at = positions.get(name);
            if (at == null) {
                throw new IllegalArgumentException("no parameter :" + name + " in: " + text);
            }
            return at;
        }

        Bound set(String name, String value) throws SQLException {
            for (int i : at(name)) {
                statement.setString(i, value);
            }
            return this;
        }

        Bound set(String name, int value) throws SQLException {
            for (int i : at(name)) {
                statement.setInt(i, value);
            }
            return this;
        }

        /** Binds an instant as the dialect's timestamp. */
        Bound time(String name, Instant value, SqlDialect dialect) throws SQLException {
            for (int i : at(name)) {
                dialect.setTime(statement, i, value);
            }
            return this;
        }

        /** Binds a collection as one SQL array of {@code type} (PostgreSQL, H2). */
        Bound array(String name, String type, Collection<?> values) throws SQLException {
            java.sql.Array array = connection.createArrayOf(type, values.toArray());
            for (int i : at(name)) {
                statement.setArray(i, array);
            }
            return this;
        }

        @Override
        public void close() throws SQLException {
            statement.close();
        }
    }

    /** Work that talks JDBC. */
    @FunctionalInterface
    interface Work<T> {
        T run() throws SQLException;
    }

    /**
     * Runs JDBC work inside a Jdbi callback: an {@link SQLException} leaves as a {@link Failure},
     * which {@link Db} treats like Jdbi's own (retried on a conflict, wrapped otherwise).
     */
    static <T> T jdbc(Work<T> work) {
        try {
            return work.run();
        } catch (SQLException e) {
            throw new Failure(e);
        }
    }

    /** An {@link SQLException} of a statement run through {@link Sql}. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(SQLException cause) {
            super(cause.getMessage(), cause);
        }
    }
}
