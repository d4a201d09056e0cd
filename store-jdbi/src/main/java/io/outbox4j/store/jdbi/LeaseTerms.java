package io.outbox4j.store.jdbi;

import java.time.Instant;

/** The lease a claim writes: its end, owner and token. */
record LeaseTerms(Instant until, String owner, String token) {}
