package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.Release;
import io.outbox4j.api.StoreUnavailableException;
import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the store does beyond the TCK, on each database: a subclass names the database. */
abstract class JdbiOutboxStoreTest {
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final Duration LEASE = Duration.ofMinutes(5);

    private final Supplier<Jdbi> jdbis;
    private final Dialect expectedDialect;
    private Jdbi jdbi;
    private JdbiOutboxStore store;

    /**
     * The tests on one database.
     *
     * @param jdbis returns a new {@code Jdbi} over the database under test
     * @param expectedDialect the dialect the store must detect on it
     */
    JdbiOutboxStoreTest(Supplier<Jdbi> jdbis, Dialect expectedDialect) {
        this.jdbis = jdbis;
        this.expectedDialect = expectedDialect;
    }

    @BeforeEach
    void createTable() {
        jdbi = jdbis.get();
        store = storeOn("outbox_store_test");
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
    }

    private JdbiOutboxStore storeOn(String table) {
        JdbiOutboxStore s = JdbiOutboxStore.builder(jdbi).tableName(table).build();
        s.createSchemaIfAbsent();
        return s;
    }

    private static Message.Builder message() {
        return Message.builder()
                .id("m-" + IDS.incrementAndGet())
                .topic("orders.created")
                .module("orders")
                .payload("{}")
                .contentType("application/json");
    }

    private static ClaimRequest claimNow(String owner, int limit) {
        return new ClaimRequest(owner, Instant.now().plusSeconds(1), LEASE, limit);
    }

    private static List<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).collect(Collectors.toList());
    }

    /** Enqueues one new message in a transaction of its own; returns it. */
    private Message enqueueOne() {
        Message m = message().build();
        jdbi.useTransaction(h -> store.enqueue(h, m));
        return m;
    }

    /** Enqueues {@code size} new messages in one batch and one transaction; returns them. */
    private List<Message> enqueueBatch(int size) {
        List<Message> batch = IntStream.range(0, size).mapToObj(i -> message().build()).toList();
        jdbi.useTransaction(h -> store.enqueueAll(h, batch));
        return batch;
    }

    private List<String> claimAllIds(JdbiOutboxStore s) {
        return ids(s.claim(claimNow("checker", ClaimRequest.MAX_LIMIT)));
    }

    @Test
    void dialect_isDetectedFromTheConnection() {
        assertThat(JdbiOutboxStore.builder(jdbi).build().dialect()).isEqualTo(expectedDialect);
    }

    @Test
    void createSchemaIfAbsent_canRunAgainOnAnExistingTable() {
        store.createSchemaIfAbsent();
        store.createSchemaIfAbsent();
        jdbi.useTransaction(h -> store.enqueue(h, message().build()));
        assertThat(claimAllIds(store)).hasSize(1);
    }

    @Test
    void missingTable_failsWithTheDdlResourceToRun() {
        JdbiOutboxStore missing =
                JdbiOutboxStore.builder(jdbi).tableName("outbox_never_created").build();
        String expected =
                "table \"outbox_never_created\" or its members and buckets tables"
                        + " \"outbox_never_created_members\", \"outbox_never_created_buckets\""
                        + " does not exist; create them with "
                        + expectedDialect.ddlResource();
        assertThatThrownBy(() -> jdbi.useTransaction(h -> missing.enqueue(h, message().build())))
                .isInstanceOf(OutboxException.class)
                .hasMessageStartingWith(expected)
                .hasMessageContaining("createSchemaIfAbsent()");
        assertThatThrownBy(() -> missing.claim(claimNow("a", 10)))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageStartingWith(expected);
    }

    @Test
    void everyField_roundTripsExactly_whateverTheJvmTimeZone() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("trace", "00-abc-01");
        headers.put("weird=name%", "a=b%41\nline two\r\n\u0000end");
        headers.put(
                "unicode-\u00e9\u4e2d", "\ud83d\ude80 rocket, \ud800 lone high, \udc00 lone low");
        headers.put("empty", "");
        byte[] payload = new byte[4096];
        new Random(7).nextBytes(payload);
        Message sent =
                message()
                        .key("customer-\u00e9-\ud83d\ude00")
                        .contentType("Application/JSON; Charset=UTF-8")
                        .payload(payload)
                        .headers(headers)
                        .occurredAt(Instant.parse("2024-02-29T23:59:59.123456789Z"))
                        .notBefore(Instant.now().minusSeconds(5).plusNanos(123_456_789))
                        .build();
        jdbi.useTransaction(h -> store.enqueue(h, sent));
        List<Delivery> got = store.claim(claimNow("a", 10));
        assertThat(got).hasSize(1);
        Message back = got.get(0).message();
        assertThat(back).isEqualTo(sent);
        assertThat(back.headers()).containsExactlyEntriesOf(sent.headers());
        assertThat(List.copyOf(back.headers().keySet()))
                .containsExactlyElementsOf(sent.headers().keySet());
        assertThat(got.get(0).attempt()).isEqualTo(1);
    }

    @Test
    void duplicateId_isRejected_andTheCallersTransactionGoesOn() {
        Message first = enqueueOne();
        Message second = message().build();
        Message third = message().build();
        jdbi.useTransaction(
                h -> {
                    store.enqueue(h, second);
                    assertThatThrownBy(
                                    () ->
                                            store.enqueue(
                                                    h, first.toBuilder().payload("other").build()))
                            .isInstanceOf(DuplicateMessageException.class)
                            .satisfies(
                                    e ->
                                            assertThat(((DuplicateMessageException) e).messageId())
                                                    .isEqualTo(first.id()))
                            .hasMessageContaining("'" + first.id() + "' is already in the outbox");
                    store.enqueue(
                            h, third); // the transaction is still usable (PostgreSQL would have
                    // aborted it)
                });
        List<Delivery> got = store.claim(claimNow("a", 10));
        assertThat(ids(got)).containsExactlyInAnyOrder(first.id(), second.id(), third.id());
        assertThat(got)
                .filteredOn(d -> d.message().id().equals(first.id()))
                .singleElement()
                .satisfies(d -> assertThat(d.message().payloadAsString()).isEqualTo("{}"));
    }

    @Test
    void duplicateIdInABatch_leavesNothingOfTheBatch_inTheCallersTransaction() {
        Message existing = enqueueOne();
        Message a = message().build();
        Message b = message().build();
        Message after = message().build();
        jdbi.useTransaction(
                h -> {
                    assertThatThrownBy(() -> store.enqueueAll(h, List.of(a, existing, b)))
                            .isInstanceOf(DuplicateMessageException.class)
                            .satisfies(
                                    e ->
                                            assertThat(((DuplicateMessageException) e).messageId())
                                                    .isEqualTo(existing.id()));
                    store.enqueue(h, after);
                });
        assertThat(claimAllIds(store)).containsExactlyInAnyOrder(existing.id(), after.id());
    }

    @Test
    void duplicateIdInABatch_onAnAutoCommitHandleOfAStoreThatAllowsIt_insertsNothing()
            throws Exception {
        JdbiOutboxStore lenient =
                JdbiOutboxStore.builder(jdbi)
                        .tableName("outbox_store_test")
                        .allowEnqueueOutsideTransaction(true)
                        .build();
        Message existing = message().build();
        jdbi.useHandle(h -> lenient.enqueue(h, existing));
        Message a = message().build();
        jdbi.useHandle(
                h -> {
                    assertThatThrownBy(() -> lenient.enqueueAll(h, List.of(a, existing)))
                            .isInstanceOf(DuplicateMessageException.class);
                    assertThat(h.getConnection().getAutoCommit())
                            .as("the handle is left in auto-commit")
                            .isTrue();
                });
        assertThat(claimAllIds(store)).containsExactly(existing.id());
    }

    @Test
    void sameIdTwiceInOneBatch_isRejectedBeforeTouchingTheDatabase() {
        Message m = message().build();
        assertThatThrownBy(() -> jdbi.useTransaction(h -> store.enqueueAll(h, List.of(m, m))))
                .isInstanceOf(DuplicateMessageException.class)
                .hasMessageContaining("'" + m.id() + "' appears twice in one batch");
        assertThat(claimAllIds(store)).isEmpty();
    }

    @Test
    void batchEnqueue_keepsTheBatchOrder() {
        List<Message> batch = enqueueBatch(50);
        assertThat(claimAllIds(store))
                .containsExactlyElementsOf(batch.stream().map(Message::id).toList());
    }

    @Test
    void jdbcEnqueue_joinsTheCallersTransaction_andRollsBackWithIt() throws Exception {
        Message rolledBack = message().build();
        Message committed = message().build();
        try (org.jdbi.v3.core.Handle h = jdbi.open()) {
            Connection c = h.getConnection();
            c.setAutoCommit(false);
            store.jdbc().enqueue(c, rolledBack);
            assertThat(claimAllIds(store)).as("not visible before the caller commits").isEmpty();
            c.rollback();
            store.jdbc().enqueueAll(c, List.of(committed));
            assertThat(claimAllIds(store)).as("not visible before the caller commits").isEmpty();
            c.commit();
            assertThat(c.isClosed()).as("the caller's connection stays open").isFalse();
            c.setAutoCommit(true);
        }
        assertThat(claimAllIds(store)).containsExactly(committed.id());
    }

    @Test
    void twoTables_doNotSeeEachOther() {
        JdbiOutboxStore other = storeOn("outbox_other_test");
        jdbi.useHandle(h -> h.execute(other.sql().deleteAll));
        Message m = enqueueOne();
        jdbi.useTransaction(
                h -> other.enqueue(h, m)); // the same id in another outbox is no duplicate
        Message onlyOther = message().build();
        jdbi.useTransaction(h -> other.enqueue(h, onlyOther));
        List<Delivery> fromStore = store.claim(claimNow("a", 10));
        assertThat(ids(fromStore)).containsExactly(m.id());
        assertThat(other.complete(new Completion("a", List.of(fromStore.get(0).receipt()))))
                .as("a receipt of the other table is unknown here")
                .hasSize(1);
        assertThat(claimAllIds(other)).containsExactly(m.id(), onlyOther.id());
    }

    @Test
    void longTableName_getsShortenedIndexNames_andWorks() {
        String name = "outbox_" + "x".repeat(56);
        assertThat(name).hasSize(63);
        JdbiOutboxStore longName = storeOn(name);
        jdbi.useHandle(h -> h.execute(longName.sql().deleteAll));
        jdbi.useTransaction(h -> longName.enqueue(h, message().build()));
        assertThat(claimAllIds(longName)).hasSize(1);
    }

    @Test
    void releaseAndDeadLetter_keepTheErrorReasonAndAttempts() {
        Message released = message().build();
        Message dead = message().build();
        jdbi.useTransaction(h -> store.enqueueAll(h, List.of(released, dead)));
        List<Delivery> got = store.claim(claimNow("a", 10));
        Instant now = Instant.now();
        assertThat(
                        store.release(
                                new Release(
                                        "a",
                                        got.get(0).receipt(),
                                        now.plusSeconds(60),
                                        "broker down\u0000")))
                .isTrue();
        assertThat(
                        store.deadLetter(
                                new DeadLetter("a", got.get(1).receipt(), "poison \ud800", now)))
                .isTrue();
        Map<String, Object> releasedRow = row(released.id());
        assertThat(releasedRow.get("last_error")).isEqualTo("broker down\uFFFD");
        assertThat(releasedRow.get("lease_owner")).isNull();
        assertThat(((Number) releasedRow.get("attempts")).intValue()).isEqualTo(1);
        Map<String, Object> deadRow = row(dead.id());
        assertThat(deadRow.get("dead_reason")).isEqualTo("poison \uFFFD");
        assertThat(deadRow.get("dead_at")).isNotNull();
        assertThat(((Number) deadRow.get("attempts")).intValue()).isEqualTo(1);
        assertThat(ids(store.claim(new ClaimRequest("b", now.plus(Duration.ofDays(1)), LEASE, 10))))
                .as("the released message comes back, the dead one never")
                .containsExactly(released.id());
    }

    @Test
    void subMicrosecondInstants_areRoundedUpAlike_soARetryIsDueAtItsInstant() {
        enqueueOne();
        Delivery d = store.claim(claimNow("a", 1)).get(0);
        Instant tick =
                Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MICROS).plusSeconds(30);
        Instant retry = tick.plusNanos(500); // half a microsecond past a tick
        assertThat(store.release(new Release("a", d.receipt(), retry, "x"))).isTrue();
        assertThat(store.claim(new ClaimRequest("b", tick, LEASE, 1)))
                .as("a microsecond early")
                .isEmpty();
        assertThat(store.claim(new ClaimRequest("b", retry, LEASE, 1)))
                .as("due at its instant")
                .hasSize(1);
    }

    @Test
    void storeLimits_rejectAMessageBeyondThem_beforeTheDatabase() {
        JdbiOutboxStore small =
                JdbiOutboxStore.builder(jdbi)
                        .tableName("outbox_store_test")
                        .limits(MessageLimits.DEFAULTS.withMaxPayloadBytes(10))
                        .build();
        Message big = message().payload("12345678901").build();
        assertThatThrownBy(() -> jdbi.useTransaction(h -> small.enqueue(h, big)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "message '"
                                + big.id()
                                + "': payload is 11 bytes, over the store's 10 limit");
        assertThat(claimAllIds(store)).isEmpty();
    }

    @Test
    void unpairedSurrogateInAnId_isRejectedClearly() {
        Message m = message().id("bad-\ud800-id").build();
        assertThatThrownBy(() -> jdbi.useTransaction(h -> store.enqueue(h, m)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("id has an unpaired surrogate");
    }

    @Test
    void rowThatIsNotAValidMessage_isDeadLettered_andDoesNotBlockTheOthers() {
        Message good = enqueueOne();
        // A row written by hand with a topic a Message refuses (whitespace).
        jdbi.useHandle(
                h ->
                        h.createUpdate(
                                        "UPDATE "
                                                + store.sql().table
                                                + " SET topic = ? WHERE id = ?")
                                .bind(0, "bad topic")
                                .bind(1, good.id())
                                .execute());
        Message next = enqueueOne();
        assertThat(ids(store.claim(claimNow("a", 10)))).containsExactly(next.id());
        assertThat(row(good.id()).get("dead_reason"))
                .asString()
                .startsWith("stored row is not a valid message: topic must not contain whitespace");
    }

    @Test
    void completeOfAThousandAndOneReceipts_spansStatements_andReportsOnlyTheStale() {
        enqueueBatch(1001);
        List<Delivery> got = store.claim(claimNow("a", 2000));
        assertThat(got).hasSize(1001);
        List<String> receipts =
                new java.util.ArrayList<>(got.stream().map(Delivery::receipt).toList());
        receipts.add(1000, "not-a-receipt");
        assertThat(store.complete(new Completion("a", receipts))).containsExactly("not-a-receipt");
        assertThat(claimAllIds(store)).isEmpty();
        long left =
                jdbi.withHandle(
                        h ->
                                h.createQuery("SELECT count(*) FROM " + store.sql().table)
                                        .mapTo(Long.class)
                                        .one());
        assertThat(left).isZero();
    }

    private boolean parked(String id) {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT parked FROM " + store.sql().table + " WHERE id = ?")
                                .bind(0, id)
                                .mapTo(Boolean.class)
                                .one());
    }

    /** Enqueues a head and a follower of one key, leases the head, parks the follower. */
    private Delivery headLeasedAndFollowerParked(Message head, Message follower) {
        jdbi.useTransaction(h -> store.enqueueAll(h, List.of(head, follower)));
        List<Delivery> first = store.claim(claimNow("a", 1));
        assertThat(ids(first)).containsExactly(head.id());
        assertThat(store.claim(claimNow("b", 10)))
                .as("the follower while its head is leased")
                .isEmpty();
        assertThat(parked(follower.id())).as("the follower is parked").isTrue();
        return first.get(0);
    }

    @Test
    void followerFoundBehindALeasedHead_isParked_andUnparkedWhenTheHeadCompletes() {
        Message head = message().key("customer-1").build();
        Message follower = message().key("customer-1").build();
        Delivery d = headLeasedAndFollowerParked(head, follower);
        assertThat(store.complete(new Completion("a", List.of(d.receipt())))).isEmpty();
        assertThat(parked(follower.id())).as("unparked by the completion of its head").isFalse();
        assertThat(ids(store.claim(claimNow("b", 10)))).containsExactly(follower.id());
    }

    @Test
    void deadLetterOfAStoreWhoseDeadLettersDoNotBlock_unparksTheFollower() {
        Message head = message().key("customer-2").build();
        Message follower = message().key("customer-2").build();
        Delivery d = headLeasedAndFollowerParked(head, follower);
        JdbiOutboxStore skipping =
                JdbiOutboxStore.builder(jdbi)
                        .tableName(store.tableName())
                        .deadLettersBlockTheirKey(false)
                        .build();
        assertThat(skipping.deadLetter(new DeadLetter("a", d.receipt(), "poison", Instant.now())))
                .isTrue();
        assertThat(parked(follower.id())).as("unparked by the dead letter").isFalse();
        assertThat(ids(skipping.claim(claimNow("b", 10)))).containsExactly(follower.id());
        assertThat(skipping.statistics(Instant.now()).blockedKeys())
                .as("keys blocked by a dead letter, for a store whose dead letters block nothing")
                .isZero();
        assertThat(store.statistics(Instant.now()).blockedKeys())
                .as("the same table through a store whose dead letters block their key")
                .isEqualTo(1);
    }

    @Test
    void deadHead_keepsItsFollowerParked_untilItIsDiscarded() {
        Message head = message().key("customer-3").build();
        Message follower = message().key("customer-3").build();
        Delivery d = headLeasedAndFollowerParked(head, follower);
        assertThat(store.deadLetter(new DeadLetter("a", d.receipt(), "poison", Instant.now())))
                .isTrue();
        assertThat(store.claim(claimNow("b", 10))).as("behind the dead letter").isEmpty();
        assertThat(parked(follower.id())).isTrue();
        assertThat(store.statistics(Instant.now().plusSeconds(1)).total().ready())
                .as("a parked follower counts as ready")
                .isEqualTo(1);
        assertThat(store.discard(List.of(head.id()))).isEqualTo(1);
        assertThat(parked(follower.id())).as("unparked by the discard").isFalse();
        assertThat(ids(store.claim(claimNow("b", 10)))).containsExactly(follower.id());
    }

    private Map<String, Object> row(String id) {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT attempts, lease_owner, last_error, dead_at, dead_reason FROM "
                                                + store.sql().table
                                                + " WHERE id = ?")
                                .bind(0, id)
                                .mapToMap()
                                .one());
    }
}
