package io.outbox4j.faulttests;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.util.List;
import java.util.Set;

/** An empty store, for building a relay only to read its derived settings. */
final class NoStore implements OutboxStore {
    @Override
    public List<Delivery> claim(ClaimRequest request) {
        return List.of();
    }

    @Override
    public Set<String> complete(Completion completion) {
        return Set.copyOf(completion.receipts());
    }

    @Override
    public boolean release(Release release) {
        return false;
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        return false;
    }

    @Override
    public Set<String> extend(Extension extension) {
        return Set.copyOf(extension.receipts());
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        return Set.copyOf(abandonment.receipts());
    }
}
