package io.outbox4j.store.mongo;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.function.Predicate;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The document shape of one outbox message, and the conversions between it and a {@link Message}.
 *
 * <pre>
 * { _id: id, seq: long, topic, key?, module, contentType, payload: binary, headers: [{n, v}, ...],
 *   bucket?: int,                // Buckets.of(key), present on keyed messages
 *   occurredAt: µs, notBefore?: µs, enqueuedAt: µs,
 *   availableAt?: ns,            // present while the message can still be claimed; absent once dead-lettered
 *   parked: bool,                // a keyed message found waiting behind an earlier one of its key
 *   parkedBehind?: true,         // a later message of this one's key was parked behind it
 *   attempts: int, owner?, receipt?, lastError?, deadAt?: ns, deadReason? }
 * </pre>
 *
 * <p>{@code bucket} is the key's bucket ({@link Buckets#of}), written at enqueue for every keyed
 * message so that a claim {@linkplain io.outbox4j.api.ClaimRequest#member() as a member} can select
 * its buckets in the query. Keyed messages enqueued by a version without membership have none; a
 * member's claim reads them too, computes their bucket and writes it ({@link Claimer}).
 *
 * <p>{@code receipt} holds the lease token of the claim that holds the document (shared by the
 * documents of that claim); a delivery's receipt is that token followed by the id (see {@link
 * Receipt}).
 *
 * <p>Every timestamp is a 64-bit count since the epoch: of microseconds for the message's own times
 * and the enqueue time (the precision a {@link Message} keeps), of nanoseconds for {@code
 * availableAt} and {@code deadAt}, which are compared with a relay's exact times (see {@link
 * Nanos}). {@code availableAt} is the only availability field: enqueue sets it to {@code notBefore}
 * (or the enqueue time), a claim moves it to the end of the lease, a release to the retry time, an
 * abandon back to the enqueue time; dead-lettering removes it. Claimable is therefore exactly
 * {@code parked: false, availableAt <= now}, served by the partial index {@code {availableAt: 1,
 * seq: 1}} over the documents that are neither dead nor parked.
 *
 * <p>{@code parked} and {@code parkedBehind} carry per-key order (see {@link KeyOrder}): a parked
 * document is out of the claim index until an earlier message of its key is finished, and {@code
 * parkedBehind} marks the earlier message whose removal must unpark its key.
 */
final class Documents {
    static final String ID = "_id";
    static final String SEQ = "seq";
    static final String TOPIC = "topic";
    static final String KEY = "key";
    static final String BUCKET = "bucket";
    static final String MODULE = "module";
    static final String CONTENT_TYPE = "contentType";
    static final String PAYLOAD = "payload";
    static final String HEADERS = "headers";
    static final String HEADER_NAME = "n";
    static final String HEADER_VALUE = "v";
    static final String OCCURRED_AT = "occurredAt";
    static final String NOT_BEFORE = "notBefore";
    static final String ENQUEUED_AT = "enqueuedAt";
    static final String AVAILABLE_AT = "availableAt";
    static final String ATTEMPTS = "attempts";
    static final String OWNER = "owner";
    static final String RECEIPT = "receipt";
    static final String LAST_ERROR = "lastError";
    static final String DEAD_AT = "deadAt";
    static final String DEAD_REASON = "deadReason";
    static final String PARKED = "parked";
    static final String PARKED_BEHIND = "parkedBehind";

    private Documents() {}

    /** Builds the document of a message about to be enqueued. */
    static BsonDocument encode(Message m, long seq, long enqueuedAtMicros) {
        BsonArray headers = new BsonArray();
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            headers.add(
                    new BsonDocument(HEADER_NAME, new BsonString(h.getKey()))
                            .append(HEADER_VALUE, new BsonString(h.getValue())));
        }
        BsonDocument d =
                new BsonDocument(ID, new BsonString(m.id()))
                        .append(SEQ, new BsonInt64(seq))
                        .append(TOPIC, new BsonString(m.topic()));
        m.key()
                .ifPresent(
                        k ->
                                d.append(KEY, new BsonString(k))
                                        .append(BUCKET, new BsonInt32(Buckets.of(k))));
        d.append(MODULE, new BsonString(m.module()))
                .append(CONTENT_TYPE, new BsonString(m.contentType()))
                .append(PAYLOAD, new BsonBinary(m.payload()))
                .append(HEADERS, headers)
                .append(OCCURRED_AT, new BsonInt64(Micros.exact(m.occurredAt(), "occurredAt")));
        long availableAt = Nanos.ofMicros(enqueuedAtMicros);
        if (m.notBefore().isPresent()) {
            long notBefore = Micros.exact(m.notBefore().get(), "notBefore");
            d.append(NOT_BEFORE, new BsonInt64(notBefore));
            availableAt = Nanos.ofMicros(notBefore);
        }
        return d.append(ENQUEUED_AT, new BsonInt64(enqueuedAtMicros))
                .append(AVAILABLE_AT, new BsonInt64(availableAt))
                .append(PARKED, BsonBoolean.FALSE)
                .append(ATTEMPTS, new BsonInt32(0));
    }

    /**
     * Rebuilds the message of a stored document.
     *
     * @throws IllegalArgumentException if the document does not hold a valid message (written by
     *     something else)
     */
    static Message decode(BsonDocument d) {
        Message.Builder b =
                Message.builder()
                        // read back without size limits: checked when enqueued, and a store whose
                        // limits were lowered since must still deliver what it already holds
                        .limits(MessageLimits.UNLIMITED)
                        .id(string(d, ID))
                        .topic(string(d, TOPIC))
                        .module(string(d, MODULE))
                        .contentType(string(d, CONTENT_TYPE))
                        .payload(binary(d, PAYLOAD))
                        .occurredAt(Micros.toInstant(int64(d, OCCURRED_AT)));
        if (d.containsKey(KEY) && !d.get(KEY).isNull()) {
            b.key(string(d, KEY));
        }
        if (d.containsKey(NOT_BEFORE) && !d.get(NOT_BEFORE).isNull()) {
            b.notBefore(Micros.toInstant(int64(d, NOT_BEFORE)));
        }
        BsonValue headers = d.get(HEADERS);
        if (headers != null && !headers.isNull()) {
            if (!headers.isArray()) {
                throw new IllegalArgumentException(
                        "field 'headers' must be an array of {n, v}, but was "
                                + headers.getBsonType());
            }
            for (BsonValue h : headers.asArray()) {
                if (!h.isDocument()) {
                    throw new IllegalArgumentException(
                            "field 'headers' must hold documents {n, v}, but held "
                                    + h.getBsonType());
                }
                b.header(string(h.asDocument(), HEADER_NAME), string(h.asDocument(), HEADER_VALUE));
            }
        }
        return b.build();
    }

    /**
     * When the store accepted the message.
     *
     * @throws IllegalArgumentException if the field is missing or not a microsecond count
     */
    static Instant enqueuedAt(BsonDocument d) {
        return Micros.toInstant(int64(d, ENQUEUED_AT));
    }

    /** The attempt count of a document, 0 when it has none. */
    static int attemptsOf(BsonDocument d) {
        BsonValue v = d.get(ATTEMPTS);
        return v != null && v.isNumber() ? Math.max(0, v.asNumber().intValue()) : 0;
    }

    /** A projection that keeps these fields. */
    static BsonDocument fields(String... names) {
        return ones(names);
    }

    /** A sort (or index keys) ascending by these fields, the first first. */
    static BsonDocument ascending(String... names) {
        return ones(names);
    }

    private static BsonDocument ones(String... names) {
        BsonDocument d = new BsonDocument();
        for (String name : names) {
            d.append(name, new BsonInt32(1));
        }
        return d;
    }

    /** A filter on the documents whose {@code _id} is one of {@code ids}. */
    static BsonDocument idIn(Collection<? extends BsonValue> ids) {
        BsonArray in = ids instanceof BsonArray array ? array : new BsonArray(new ArrayList<>(ids));
        return new BsonDocument(ID, new BsonDocument("$in", in));
    }

    /** The {@code _id} of a document read from the collection (every document has one). */
    static BsonValue idOf(BsonDocument d) {
        return d.get(ID, BsonNull.VALUE);
    }

    /**
     * The enqueue order of a document.
     *
     * @throws IllegalArgumentException if it has none (a document this store did not write)
     */
    static long seqOf(BsonDocument d) {
        BsonValue v = d.get(SEQ);
        if (v == null || !v.isNumber()) {
            throw new IllegalArgumentException(
                    "field 'seq' must be a number, but was "
                            + (v == null ? "missing" : v.getBsonType()));
        }
        return v.asNumber().longValue();
    }

    /**
     * The bucket stored in a document, or null when it has none (an unkeyed message, or a keyed one
     * enqueued by a version without membership).
     */
    static @Nullable Integer bucketOf(BsonDocument d) {
        BsonValue v = d.get(BUCKET);
        return v != null && v.isNumber() ? v.asNumber().intValue() : null;
    }

    /** The key of a document, or null for an unkeyed one. */
    static @Nullable String keyOf(BsonDocument d) {
        BsonValue v = d.get(KEY);
        return v != null && v.isString() ? v.asString().getValue() : null;
    }

    /** The attempt count of a claimed document (at least 1). */
    static int attempts(BsonDocument d) {
        BsonValue v = d.get(ATTEMPTS);
        return v != null && v.isNumber() ? Math.max(1, v.asNumber().intValue()) : 1;
    }

    private static String string(BsonDocument d, String field) {
        return required(d, field, BsonValue::isString, "a string").asString().getValue();
    }

    private static byte[] binary(BsonDocument d, String field) {
        return required(d, field, BsonValue::isBinary, "binary").asBinary().getData();
    }

    private static long int64(BsonDocument d, String field) {
        return required(d, field, BsonValue::isInt64, "a 64-bit integer of epoch microseconds")
                .asInt64()
                .getValue();
    }

    /**
     * The value of {@code field}, which {@code is} must accept.
     *
     * @throws IllegalArgumentException saying the field must be {@code what}, if it is missing or
     *     {@code is} refuses it
     */
    private static BsonValue required(
            BsonDocument d, String field, Predicate<BsonValue> is, String what) {
        BsonValue v = d.get(field);
        if (v == null || !is.test(v)) {
            throw new IllegalArgumentException(
                    "field '"
                            + field
                            + "' must be "
                            + what
                            + ", but was "
                            + (v == null ? "missing" : v.getBsonType()));
        }
        return v;
    }
}
