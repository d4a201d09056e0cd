package io.outbox4j.store.jdbi;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Release;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The dispatch side ({@link io.outbox4j.api.OutboxStore}) over a dialect: parses receipts, rounds
 * instants, and turns what the dialect changed into the port's answers (stale receipts).
 */
final class Dispatcher {
    private final SqlDialect dialect;
    private final Db db;

    Dispatcher(SqlDialect dialect, Db db) {
        this.dialect = dialect;
        this.db = db;
    }

    List<Delivery> claim(ClaimRequest request) {
        Objects.requireNonNull(request, "request");
        String owner = request.owner();
        String token = UUID.randomUUID().toString();
        List<StoredRow> rows =
                dialect.claim(
                        db,
                        Times.decision(request.now()),
                        new LeaseTerms(Times.decision(request.leaseUntil()), owner, token),
                        request.limit(),
                        request.member() ? owner : null);
        List<Delivery> deliveries = new ArrayList<>(rows.size());
        Set<String> brokenKeys = new HashSet<>();
        List<String> heldBack = new ArrayList<>();
        for (StoredRow r : rows) {
            String receipt = new Receipt(token, r.id, r.key != null).toString();
            if (r.message == null) {
                // A row that is not a valid message (written by hand?) would block every claim.
                deadLetter(
                        new DeadLetter(
                                owner,
                                receipt,
                                "stored row is not a valid message: " + r.unreadable,
                                request.now()));
                if (r.key != null && dialect.deadLettersBlock) {
                    brokenKeys.add(r.key);
                }
            } else if (r.key != null && brokenKeys.contains(r.key)) {
                heldBack.add(receipt); // behind the dead letter just made: not handed out
            } else {
                deliveries.add(new Delivery(r.message, receipt, r.attempts, r.enqueuedAt));
            }
        }
        if (!heldBack.isEmpty()) {
            abandon(new Abandonment(owner, heldBack));
        }
        return deliveries;
    }

    Set<String> complete(Completion completion) {
        Objects.requireNonNull(completion, "completion");
        return forEachLease(
                completion.receipts(),
                receipts -> dialect.complete(db, completion.owner(), receipts));
    }

    boolean release(Release release) {
        Objects.requireNonNull(release, "release");
        Optional<Receipt> receipt = Receipt.parse(release.receipt());
        if (receipt.isEmpty()) {
            return false;
        }
        Instant at = Times.decision(release.availableAt());
        String error = HeaderCodec.storableText(release.error());
        return db.statement(
                "release",
                h ->
                        updateLease(
                                h,
                                dialect.release,
                                receipt.get(),
                                release.owner(),
                                at,
                                "error",
                                error));
    }

    /**
     * Dead-letters one lease. When dead letters do not block their key, a dead letter removes a row
     * from its key's way: its bucket's lock is taken and the key unparked in the same transaction.
     */
    boolean deadLetter(DeadLetter deadLetter) {
        Objects.requireNonNull(deadLetter, "deadLetter");
        Optional<Receipt> receipt = Receipt.parse(deadLetter.receipt());
        if (receipt.isEmpty()) {
            return false;
        }
        Instant at = Times.record(deadLetter.at());
        String reason = HeaderCodec.storableText(deadLetter.reason());
        if (dialect.deadLettersBlock) {
            return db.statement(
                    "dead-letter", h -> deadLetterRow(h, deadLetter, receipt.get(), at, reason));
        }
        return db.transaction(
                "dead-letter",
                h -> {
                    dialect.lockBucketsOfIds(h, List.of(receipt.get().id()));
                    if (!deadLetterRow(h, deadLetter, receipt.get(), at, reason)) {
                        return false;
                    }
                    h.createQuery(dialect.keyOf)
                            .bind("id", receipt.get().id())
                            .mapTo(String.class)
                            .findOne()
                            .ifPresent(key -> dialect.unpark(h, Map.of(key, 1)));
                    return true;
                });
    }

    private boolean deadLetterRow(
            org.jdbi.v3.core.Handle h,
            DeadLetter deadLetter,
            Receipt receipt,
            Instant at,
            String reason) {
        return updateLease(
                h, dialect.deadLetter, receipt, deadLetter.owner(), at, "reason", reason);
    }

    /**
     * Runs a release or dead-letter update of the one row the receipt's live lease holds, binding
     * {@code :at}, the text (the release error or dead-letter reason) under its name, and the
     * lease's id, token and owner; true if it changed the row.
     */
    private boolean updateLease(
            org.jdbi.v3.core.Handle h,
            String update,
            Receipt receipt,
            String owner,
            Instant at,
            String textName,
            String text) {
        return h.createUpdate(update)
                        .bind("at", dialect.time(at))
                        .bind(textName, text)
                        .bind("id", receipt.id())
                        .bind("token", receipt.token())
                        .bind("owner", owner)
                        .execute()
                == 1;
    }

    Set<String> extend(Extension extension) {
        Objects.requireNonNull(extension, "extension");
        Instant until = Times.decision(extension.until());
        return forEachLease(
                extension.receipts(),
                receipts -> {
                    Set<Receipt.Lease> moved = new HashSet<>();
                    for (List<Receipt> chunk : SqlDialect.chunks(receipts)) {
                        moved.addAll(dialect.extend(db, extension.owner(), chunk, until));
                    }
                    return moved;
                });
    }

    Set<String> abandon(Abandonment abandonment) {
        Objects.requireNonNull(abandonment, "abandonment");
        return forEachLease(
                abandonment.receipts(),
                receipts -> {
                    Set<Receipt.Lease> given = new HashSet<>();
                    for (List<Receipt> chunk : SqlDialect.chunks(receipts)) {
                        given.addAll(dialect.abandon(db, abandonment.owner(), chunk));
                    }
                    return given;
                });
    }

    /**
     * Applies a write to the leases the receipts name (each once) and returns the receipts it did
     * not change: those this store never issued and those whose lease was not found.
     */
    private static Set<String> forEachLease(
            List<String> texts,
            java.util.function.Function<List<Receipt>, Set<Receipt.Lease>> write) {
        Set<String> stale = new LinkedHashSet<>();
        Map<Receipt, String> asked = new LinkedHashMap<>();
        for (String text : texts) {
            Optional<Receipt> r = Receipt.parse(text);
            if (r.isPresent()) {
                asked.putIfAbsent(r.get(), text);
            } else {
                stale.add(text);
            }
        }
        if (asked.isEmpty()) {
            return stale;
        }
        Set<Receipt.Lease> changed = write.apply(new ArrayList<>(asked.keySet()));
        asked.forEach(
                (receipt, text) -> {
                    if (!changed.contains(receipt.lease())) {
                        stale.add(text);
                    }
                });
        return stale;
    }
}
