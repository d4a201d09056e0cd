package io.outbox4j.tck;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Forwards every call to an admin port, so that a broken admin can bend exactly one rule. */
class ForwardingAdmin implements OutboxAdmin {
    final OutboxAdmin delegate;

    ForwardingAdmin(OutboxAdmin delegate) {
        this.delegate = delegate;
    }

    @Override
    public OutboxStatistics statistics(Instant now) {
        return delegate.statistics(now);
    }

    @Override
    public DeadLetterPage deadLetters(DeadLetterQuery query) {
        return delegate.deadLetters(query);
    }

    @Override
    public int replay(List<String> ids, Instant now) {
        return delegate.replay(ids, now);
    }

    @Override
    public int replayAll(DeadLetterQuery filter, Instant now) {
        return delegate.replayAll(filter, now);
    }

    @Override
    public int discard(List<String> ids) {
        return delegate.discard(ids);
    }

    @Override
    public int discardAll(DeadLetterQuery filter) {
        return delegate.discardAll(filter);
    }

    @Override
    public Optional<String> lastError(String id) {
        return delegate.lastError(id);
    }
}
