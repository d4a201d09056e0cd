package io.outbox4j.engine;

import static io.outbox4j.engine.Fixtures.message;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Attempts count real tries: a message claimed but never handed to the publisher gives its attempt
 * back, so {@code maxAttempts} counts only the times the broker saw the message.
 */
class RealTriesTest extends RelayRig {
    /**
     * The case: with maxAttempts 3, k2 waited behind k1 (claimed and held back) and was
     * dead-lettered "after 4 attempts" although the broker had seen it once. Here k1 and k2 each
     * fail twice and succeed at their third real try; k2 is held back at least once on the way.
     */
    @Test
    void aMessageHeldBackBehindItsKey_isNeverDeadLetteredForTriesItDidNotHave() {
        enqueue(message("k1", "k"), message("k2", "k"), message("u1"));
        Map<String, AtomicInteger> handed = new ConcurrentHashMap<>();
        List<String> attemptMismatches = new ArrayList<>();
        Fixtures.ScriptedPublisher failsTwice =
                new Fixtures.ScriptedPublisher(
                        m -> {
                            int tries =
                                    handed.computeIfAbsent(m.id(), id -> new AtomicInteger())
                                            .incrementAndGet();
                            return tries <= 2
                                    ? PublishOutcome.failed(new IllegalStateException("nack"))
                                    : PublishOutcome.published();
                        });
        try (Relay relay =
                Relay.builder(store, failsTwice)
                        .clock(clock)
                        .observer(
                                o -> {
                                    if (TRIED.contains(o.outcome())
                                            && o.attempt() != handed.get(o.messageId()).get()) {
                                        attemptMismatches.add(o.toString());
                                    }
                                    observer.onDelivery(o);
                                })
                        .maxAttempts(3)
                        .backoff(Backoff.fixed(Duration.ZERO))
                        .build()) {
            for (int round = 0; round < 20 && memory.size() > 0; round++) {
                relay.runOnce();
            }
        }
        assertThat(memory.size()).as("everything published in the end").isZero();
        assertThat(store.deadLetters).isEmpty();
        assertThat(handed).allSatisfy((id, n) -> assertThat(n.get()).as(id).isEqualTo(3));
        assertThat(attemptMismatches).as("observed attempt = real tries so far").isEmpty();
        assertThat(observer.deliveries)
                .filteredOn(o -> o.messageId().equals("k2"))
                .extracting(Observation::outcome)
                .as("k2 was held back untried at least once")
                .contains(Outcome.ABANDONED)
                .endsWith(Outcome.COMPLETED);
        assertThat(attemptsOf("k2")).containsExactly(1, 2, 3);
    }

    @Test
    void theLastRealTry_isDeadLettered_atMaxAttempts_notBefore() {
        enqueue(message("k1", "k"), message("k2", "k"));
        Fixtures.ScriptedPublisher k1AlwaysFails = Fixtures.ScriptedPublisher.failing("k1"::equals);
        try (Relay relay =
                relayOn(store, k1AlwaysFails)
                        .maxAttempts(3)
                        .backoff(Backoff.fixed(Duration.ZERO))
                        .build()) {
            for (int round = 0; round < 10; round++) {
                relay.runOnce();
            }
        }
        assertThat(k1AlwaysFails.publishedIdsInOrder())
                .as("k1 tried three times, k2 never (the dead letter blocks its key)")
                .containsExactly("k1", "k1", "k1");
        assertThat(memory.deadLetterReason("k1"))
                .hasValueSatisfying(r -> assertThat(r).startsWith("gave up after 3 attempts"));
        assertThat(memory.attempts("k2")).as("k2 used no attempt").hasValue(0);
    }

    private static final EnumSet<Outcome> TRIED =
            EnumSet.of(Outcome.COMPLETED, Outcome.RELEASED, Outcome.DEAD_LETTERED);

    private List<Integer> attemptsOf(String id) {
        return observer.deliveries.stream()
                .filter(o -> o.messageId().equals(id) && TRIED.contains(o.outcome()))
                .map(Observation::attempt)
                .toList();
    }
}
