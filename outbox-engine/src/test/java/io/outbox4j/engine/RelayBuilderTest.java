package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RelayBuilderTest {
    private static Relay.Builder builder() {
        return Relay.builder(new InMemoryOutboxStore(), Fixtures.ScriptedPublisher.accepting());
    }

    static Stream<Arguments> invalidSettings() {
        return Stream.of(
                bad(
                        "batchSize 0",
                        b -> b.batchSize(0),
                        "batchSize must be between 1 and 10000, but was 0"),
                bad(
                        "batchSize negative",
                        b -> b.batchSize(-5),
                        "batchSize must be between 1 and 10000, but was -5"),
                bad(
                        "batchSize over the claim limit",
                        b -> b.batchSize(10_001),
                        "batchSize must be between 1 and 10000, but was 10001"),
                bad(
                        "minBatchSize 0",
                        b -> b.minBatchSize(0),
                        "minBatchSize must be between 1 and 10000, but was 0"),
                bad(
                        "minBatchSize over the batch size",
                        b -> b.batchSize(100).minBatchSize(101),
                        "minBatchSize must be <= batchSize (100), but was 101"),
                bad(
                        "maxInFlight under the batch size",
                        b -> b.batchSize(100).maxInFlight(99),
                        "maxInFlight must be >= batchSize (100) so that a full claim fits, but was"
                                + " 99"),
                bad(
                        "wakeUpWindow negative",
                        b -> b.wakeUpWindow(Duration.ofMillis(-1)),
                        "wakeUpWindow must be between 0s and 1s, but was -1ms"),
                bad(
                        "wakeUpWindow over a second",
                        b -> b.wakeUpWindow(Duration.ofMillis(1001)),
                        "wakeUpWindow must be between 0s and 1s, but was 1.001s"),
                bad(
                        "wakeUpWindow null",
                        b -> b.wakeUpWindow(null),
                        "wakeUpWindow must not be null"),
                bad(
                        "workers 0",
                        b -> b.workers(0),
                        "workers must be between 1 and 1024, but was 0"),
                bad(
                        "deliveryTimeout zero",
                        b -> b.deliveryTimeout(Duration.ZERO),
                        "deliveryTimeout must be between 1ms and 60m, but was 0s"),
                bad(
                        "deliveryTimeout negative",
                        b -> b.deliveryTimeout(Duration.ofSeconds(-1)),
                        "deliveryTimeout must be between 1ms and 60m, but was -1s"),
                bad(
                        "deliveryTimeout null",
                        b -> b.deliveryTimeout(null),
                        "deliveryTimeout must not be null"),
                bad(
                        "maxAttempts 0",
                        b -> b.maxAttempts(0),
                        "maxAttempts must be between 1 and 2147483647, but was 0"),
                bad(
                        "backoff null",
                        b -> b.backoff(null),
                        "backoff must not be null; use Backoff.DEFAULT or Backoff.exponential(base, max)"),
                bad(
                        "clock null",
                        b -> b.clock(null),
                        "clock must not be null; use Clock.systemUTC()"),
                bad(
                        "observer null",
                        b -> b.observer(null),
                        "observer must not be null; use Observer.NOOP to observe nothing"),
                bad(
                        "pollInterval zero",
                        b -> b.pollInterval(Duration.ZERO),
                        "pollInterval must be between 1ms and 60m, but was 0s"),
                bad(
                        "pollInterval null",
                        b -> b.pollInterval(null),
                        "pollInterval must not be null"),
                bad(
                        "shutdownTimeout negative",
                        b -> b.shutdownTimeout(Duration.ofMillis(-1500)),
                        "shutdownTimeout must be between 0s and 60m, but was -1.5s"),
                bad("lease null", b -> b.lease(null), "lease must not be null"),
                bad(
                        "lease under a second",
                        b -> b.lease(Duration.ofMillis(999)),
                        "lease must be between 1s and 30m, but was 999ms"),
                bad(
                        "lease over thirty minutes",
                        b -> b.lease(Duration.ofMinutes(30).plusSeconds(1)),
                        "lease must be between 1s and 30m, but was 30m1s"),
                bad("owner blank", b -> b.owner("  "), "owner must not be blank, but was '  '"),
                bad(
                        "owner with a line break",
                        b -> b.owner("relay\n1"),
                        "owner must not contain control characters (found U+000A at index 5)"),
                bad(
                        "owner too long",
                        b -> b.owner("x".repeat(256)),
                        "owner is 256 characters, over the 255 limit"));
    }

    private static Arguments bad(String name, UnaryOperator<Relay.Builder> change, String message) {
        return Arguments.of(name, change, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidSettings")
    void build_rejectsAnInvalidSetting_withAMessageSayingWhatToChange(
            String name, UnaryOperator<Relay.Builder> change, String message) {
        assertThatThrownBy(() -> change.apply(builder()).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @Test
    void build_rejectsMissingStoreOrPublisher() {
        assertThatThrownBy(
                        () -> Relay.builder(null, Fixtures.ScriptedPublisher.accepting()).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("store must not be null");
        assertThatThrownBy(() -> Relay.builder(new InMemoryOutboxStore(), null).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("publisher must not be null");
    }

    @Test
    void defaults_areThePublicConstants_andTheLeaseIsShort() {
        RecordingStore store = new RecordingStore(new InMemoryOutboxStore());
        try (Relay relay = Relay.builder(store, Fixtures.ScriptedPublisher.accepting()).build()) {
            assertThat(relay.lease())
                    .isEqualTo(Relay.DEFAULT_LEASE)
                    .isEqualTo(Duration.ofSeconds(15));
            relay.runOnce();
        }
        ClaimRequest request = store.claims.get(0);
        assertThat(request.limit())
                .as("runOnce claims the largest batch")
                .isEqualTo(Relay.DEFAULT_BATCH_SIZE)
                .isEqualTo(500);
        assertThat(Relay.DEFAULT_MIN_BATCH_SIZE).isEqualTo(16);
        assertThat(Relay.DEFAULT_IN_FLIGHT_BATCHES).isEqualTo(2);
        assertThat(Relay.DEFAULT_WAKE_UP_WINDOW).isEqualTo(Duration.ofMillis(4));
        assertThat(request.lease()).isEqualTo(Relay.DEFAULT_LEASE);
        assertThat(Relay.DEFAULT_WORKERS).isEqualTo(4);
        assertThat(Relay.DEFAULT_DELIVERY_TIMEOUT).isEqualTo(Duration.ofSeconds(30));
        assertThat(Relay.DEFAULT_MAX_ATTEMPTS).isEqualTo(8);
        assertThat(Relay.DEFAULT_POLL_INTERVAL).isEqualTo(Duration.ofSeconds(1));
        assertThat(Relay.DEFAULT_SHUTDOWN_TIMEOUT).isEqualTo(Duration.ofSeconds(30));
    }

    /** The seed refused batchSize(500) with the default timeout (its derived lease was 63m). */
    @ParameterizedTest(name = "batchSize {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {500, 2_000, ClaimRequest.MAX_LIMIT})
    void anyBatchSizeUpToTheLargestClaim_buildsWithTheDefaultTimeouts_andClaimsTheShortLease(
            int batchSize) {
        RecordingStore store = new RecordingStore(new InMemoryOutboxStore());
        try (Relay relay =
                Relay.builder(store, Fixtures.ScriptedPublisher.accepting())
                        .batchSize(batchSize)
                        .build()) {
            relay.runOnce();
        }
        assertThat(store.claims)
                .singleElement()
                .satisfies(
                        r -> {
                            assertThat(r.limit()).isEqualTo(batchSize);
                            assertThat(r.lease()).isEqualTo(Duration.ofSeconds(15));
                        });
    }

    @Test
    void claim_asksForTheConfiguredLeaseBatchSizeAndOwner() {
        RecordingStore store = new RecordingStore(new InMemoryOutboxStore());
        try (Relay relay =
                Relay.builder(store, Fixtures.ScriptedPublisher.accepting())
                        .owner("relay-7")
                        .batchSize(20)
                        .workers(5)
                        .lease(Duration.ofSeconds(3))
                        .build()) {
            relay.runOnce();
            ClaimRequest request = store.claims.get(0);
            assertThat(request.owner()).isEqualTo("relay-7");
            assertThat(request.limit()).isEqualTo(20);
            assertThat(request.lease()).isEqualTo(relay.lease()).isEqualTo(Duration.ofSeconds(3));
        }
    }

    @Test
    void theBatchSafetyLimit_isTheSeedsDerivedBound_cappedAtThirtyMinutes_neverOverflowing() {
        assertThat(Settings.maxBatchDuration(16, 4, Duration.ofSeconds(30)))
                .as("(ceil(16/4)+1) x 30s")
                .isEqualTo(Duration.ofSeconds(150));
        assertThat(Settings.maxBatchDuration(10, 3, Duration.ofSeconds(10)))
                .as("(ceil(10/3)+1) x 10s")
                .isEqualTo(Duration.ofSeconds(50));
        assertThat(Settings.maxBatchDuration(500, 4, Duration.ofSeconds(30)))
                .as("63m, capped")
                .isEqualTo(Relay.MAX_BATCH_DURATION);
        assertThat(Settings.maxBatchDuration(10_000, 1, Duration.ofSeconds(Long.MAX_VALUE)))
                .isEqualTo(Relay.MAX_BATCH_DURATION);
    }

    @Test
    void defaultOwner_isHostPidRandom_andDiffersPerRelay() {
        RecordingStore store = new RecordingStore(new InMemoryOutboxStore());
        try (Relay a = Relay.builder(store, Fixtures.ScriptedPublisher.accepting()).build();
                Relay b = Relay.builder(store, Fixtures.ScriptedPublisher.accepting()).build()) {
            a.runOnce();
            b.runOnce();
        }
        String first = store.claims.get(0).owner();
        String second = store.claims.get(1).owner();
        assertThat(first)
                .contains("-" + ProcessHandle.current().pid() + "-")
                .doesNotContainAnyWhitespaces();
        assertThat(first).isNotEqualTo(second);
    }
}
