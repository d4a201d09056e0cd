package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PortValuesTest {
    private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");
    private final Message message =
            Message.builder().id("m1").topic("t").module("mod").payload("p").build();

    @Test
    void claimRequest_validatesEveryField() {
        assertThat(new ClaimRequest("relay-1", NOW, Duration.ofSeconds(30), 10).leaseUntil())
                .isEqualTo(NOW.plusSeconds(30));
        assertThatThrownBy(() -> new ClaimRequest("relay-1", NOW, Duration.ZERO, 10))
                .hasMessage("lease must be positive, but was PT0S");
        assertThatThrownBy(() -> new ClaimRequest("relay-1", NOW, Duration.ofSeconds(1), 0))
                .hasMessage("limit must be >= 1, but was 0");
        assertThatThrownBy(() -> new ClaimRequest("relay-1", NOW, Duration.ofSeconds(1), 10_001))
                .hasMessage("limit must be <= 10000, but was 10001");
        assertThatThrownBy(() -> new ClaimRequest("", NOW, Duration.ofSeconds(1), 1))
                .hasMessage("owner must not be blank, but was ''");
    }

    @Test
    void delivery_rejectsAttemptBelowOne_andHidesReceipt() {
        assertThatThrownBy(() -> new Delivery(message, "r", 0, NOW))
                .hasMessage("attempt must be >= 1, but was 0");
        assertThat(new Delivery(message, "secret-receipt", 1, NOW).toString())
                .doesNotContain("secret-receipt");
    }

    @Test
    void extensionAndAbandonment_rejectEmptyReceipts() {
        assertThatThrownBy(() -> new Extension("o", List.of(), NOW))
                .hasMessage("receipts must not be empty");
        assertThatThrownBy(() -> new Abandonment("o", List.of()))
                .hasMessage("receipts must not be empty");
        assertThatThrownBy(() -> new Extension("o", List.of("r"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("until");
    }

    @Test
    void deadLetterQuery_validatesLimit_andMatchesTopicAndTimeRange() {
        assertThatThrownBy(() -> DeadLetterQuery.all().limit(0))
                .hasMessage("limit must be between 1 and 1000, but was 0");
        DeadLetterQuery q =
                DeadLetterQuery.all().topic("t").deadFrom(NOW).deadBefore(NOW.plusSeconds(10));
        DeadMessage inside = new DeadMessage(message, "r", 1, NOW, NOW.plusSeconds(5));
        DeadMessage tooLate = new DeadMessage(message, "r", 1, NOW, NOW.plusSeconds(10));
        assertThat(q.matches(inside)).isTrue();
        assertThat(DeadLetterQuery.all().topic("other").matches(inside)).isFalse();
        assertThat(q.matches(tooLate)).isFalse();
        assertThat(DeadLetterQuery.all().matches(tooLate)).isTrue();
    }

    @Test
    void completion_copiesReceipts_andRejectsEmpty() {
        List<String> receipts = new ArrayList<>(List.of("a", "b"));
        Completion c = new Completion("o", receipts);
        receipts.add("c");
        assertThat(c.receipts()).containsExactly("a", "b");
        assertThatThrownBy(() -> new Completion("o", List.of()))
                .hasMessage("receipts must not be empty");
    }

    @Test
    void releaseAndDeadLetter_cutOverlongText() {
        String longText = "x".repeat(5000);
        assertThat(new Release("o", "r", NOW, longText).error()).hasSize(Release.MAX_ERROR_LENGTH);
        assertThat(new DeadLetter("o", "r", longText, NOW).reason())
                .hasSize(Release.MAX_ERROR_LENGTH);
        assertThatThrownBy(() -> new DeadLetter("o", "r", " ", NOW))
                .hasMessage("reason must not be blank");
    }

    @Test
    void publishOutcome_classifiesThroughTheCauseChain() {
        PublishOutcome permanent =
                PublishOutcome.failed(
                        new RuntimeException(
                                "wrapped", new PermanentFailureException("too large")));
        PublishOutcome throttled =
                PublishOutcome.failed(
                        new RetryAfterException("slow down", Duration.ofSeconds(7), null));
        PublishOutcome plain = PublishOutcome.failed(new IllegalStateException("boom"));

        assertThat(PublishOutcome.published().isPublished()).isTrue();
        assertThat(permanent.isPermanent()).isTrue();
        assertThat(throttled.isPermanent()).isFalse();
        assertThat(throttled.retryAfter()).contains(Duration.ofSeconds(7));
        assertThat(plain.isPermanent()).isFalse();
        assertThat(plain.retryAfter()).isEmpty();
        assertThat(plain.failure()).get().isInstanceOf(IllegalStateException.class);
    }

    @Test
    void perMessagePublisher_reportsEachOutcomeInOrder() {
        Publisher p =
                Publisher.perMessage(
                        m -> {
                            if (m.id().equals("bad")) {
                                throw new PermanentFailureException("rejected");
                            }
                        });
        Message bad = message.toBuilder().id("bad").build();
        List<PublishOutcome> outcomes =
                p.publish(List.of(message, bad, message), Duration.ofSeconds(1));
        assertThat(outcomes)
                .extracting(PublishOutcome::isPublished)
                .containsExactly(true, false, true);
        assertThat(outcomes.get(1).isPermanent()).isTrue();
    }

    @Test
    void exponentialBackoff_doublesUpToTheCap_withoutOverflow() {
        Backoff b = Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(10));
        assertThat(b.delay(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(b.delay(2)).isEqualTo(Duration.ofSeconds(2));
        assertThat(b.delay(5)).isEqualTo(Duration.ofSeconds(16));
        assertThat(b.delay(10)).isEqualTo(Duration.ofSeconds(512));
        assertThat(b.delay(11)).isEqualTo(Duration.ofMinutes(10));
        assertThat(b.delay(Integer.MAX_VALUE)).isEqualTo(Duration.ofMinutes(10));
        assertThat(Backoff.DEFAULT.delay(100)).isEqualTo(Duration.ofMinutes(10));
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(1)))
                .hasMessage("max must be >= base (PT5S), but was PT1S");
        Backoff huge =
                Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(Long.MAX_VALUE / 2));
        assertThat(huge.delay(200)).isEqualTo(Duration.ofSeconds(Long.MAX_VALUE / 2));
    }

    @Test
    void observation_rejectsMissingFields() {
        assertThatThrownBy(
                        () ->
                                new Observation(
                                        "id-1",
                                        Optional.empty(),
                                        "t",
                                        "m",
                                        Instant.EPOCH,
                                        1,
                                        Duration.ZERO,
                                        null,
                                        Optional.empty(),
                                        false))
                .hasMessage("outcome must not be null");
    }
}
