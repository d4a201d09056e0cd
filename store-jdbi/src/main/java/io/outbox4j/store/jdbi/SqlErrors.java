package io.outbox4j.store.jdbi;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Classifies the errors of the supported databases by SQLState and vendor code, never by message
 * text alone.
 */
final class SqlErrors {
    private SqlErrors() {}

    /**
     * Every {@link SQLException} in the cause chain and the next-exception chains, outermost first.
     */
    static List<SQLException> chain(Throwable t) {
        List<SQLException> found = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        collect(t, found, seen);
        return found;
    }

    private static void collect(Throwable t, List<SQLException> found, Set<Throwable> seen) {
        for (Throwable c = t; c != null && seen.size() < 64 && seen.add(c); c = c.getCause()) {
            if (c instanceof SQLException s) {
                found.add(s);
                SQLException next = s.getNextException();
                if (next != null && next != s.getCause()) {
                    collect(next, found, seen);
                }
            }
        }
    }

    /** A unique-key violation: PostgreSQL and H2 23505, MariaDB and MySQL 23000 with error 1062. */
    static boolean duplicateKey(Throwable t) {
        return anyInChain(
                t,
                s ->
                        "23505".equals(s.getSQLState())
                                || (s.getErrorCode() == 1062 && "23000".equals(s.getSQLState())));
    }

    /** An unknown table: PostgreSQL 42P01, MariaDB and MySQL 42S02 / 1146, H2 42S02 / 42102. */
    static boolean missingTable(Throwable t) {
        return anyInChain(t, Set.of("42P01", "42S02"), Set.of(1146, 42102));
    }

    /**
     * A conflict the database resolved by aborting this transaction, worth one more try:
     * serialization failure (40001), deadlock (PostgreSQL 40P01, MariaDB and MySQL 1213), H2 lock
     * timeout (50200).
     */
    static boolean transientConflict(Throwable t) {
        return anyInChain(t, Set.of("40001", "40P01"), Set.of(1213, 50200));
    }

    /** Whether an SQL exception in the chain has one of these SQL states or vendor error codes. */
    private static boolean anyInChain(Throwable t, Set<String> states, Set<Integer> errorCodes) {
        return anyInChain(
                t,
                s ->
                        (s.getSQLState() != null && states.contains(s.getSQLState()))
                                || errorCodes.contains(s.getErrorCode()));
    }

    /** Whether an SQL exception in the chain passes the test. */
    private static boolean anyInChain(Throwable t, Predicate<SQLException> test) {
        return chain(t).stream().anyMatch(test);
    }

    /**
     * The messages of every SQL exception in the chain, for finding which id a duplicate-key error
     * names.
     */
    static String text(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (SQLException s : chain(t)) {
            sb.append(s.getMessage()).append('\n');
        }
        return sb.toString();
    }
}
