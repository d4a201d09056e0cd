package io.outbox4j.store.jdbi;

import java.time.Instant;
import org.jdbi.v3.core.statement.SqlStatement;

/** The lease a claim writes: its end, owner and token. */
record LeaseTerms(Instant until, String owner, String token) {

    /**
     * Binds the terms as {@code :until} (in the dialect's time type), {@code :owner}, {@code
     * :token}.
     */
    <S extends SqlStatement<S>> S bindTo(S statement, SqlDialect dialect) {
        return statement
                .bind("until", dialect.time(until))
                .bind("owner", owner)
                .bind("token", token);
    }
}
