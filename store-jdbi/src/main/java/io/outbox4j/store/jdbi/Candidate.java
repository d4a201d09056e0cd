package io.outbox4j.store.jdbi;

import io.outbox4j.api.Buckets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A row a claim read from the claim index: its place in enqueue order, its key, and the enqueue
 * sequence of the latest earlier message of its key still in the table ({@code prevSeq}, null when
 * there is none). Dialects that cannot return the rows they lease carry the message ({@code row})
 * read with the candidate.
 *
 * @param id the message id
 * @param seq its enqueue order
 * @param key its key, or null
 * @param prevSeq the predecessor of its key, or null
 * @param prevMine whether that predecessor is leased, live, by the claimer itself (dialects that do
 *     not read it say false)
 * @param row the message row when the dialect reads it with the candidate, else null
 */
record Candidate(
        String id,
        long seq,
        @Nullable String key,
        @Nullable Long prevSeq,
        boolean prevMine,
        @Nullable StoredRow row) {
    @Override
    public String toString() {
        return id
                + "@"
                + seq
                + (key == null
                        ? ""
                        : "[" + key + " after " + prevSeq + (prevMine ? " (mine)" : "") + "]");
    }

    /** The bucket of a blocked row: only keyed rows are ever blocked. */
    int bucket() {
        return Buckets.of(Objects.requireNonNull(key, "a blocked row has a key"));
    }
}
