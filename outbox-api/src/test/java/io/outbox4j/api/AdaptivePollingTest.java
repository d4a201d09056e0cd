package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class AdaptivePollingTest {

    @Test
    void shortAfterAClaimThatFound_thenDoublingUpToThePollInterval() {
        Duration poll = Duration.ofMillis(100);
        Duration w = AdaptivePolling.next(poll, poll, true);
        assertThat(w).isEqualTo(Duration.ofMillis(10));
        w = AdaptivePolling.next(w, poll, false);
        assertThat(w).isEqualTo(Duration.ofMillis(20));
        w = AdaptivePolling.next(w, poll, false);
        w = AdaptivePolling.next(w, poll, false);
        assertThat(w).isEqualTo(Duration.ofMillis(80));
        w = AdaptivePolling.next(w, poll, false);
        assertThat(w).as("capped at the poll interval").isEqualTo(poll);
        assertThat(AdaptivePolling.next(w, poll, false)).isEqualTo(poll);
        assertThat(AdaptivePolling.next(poll, Duration.ofMillis(5), true))
                .as("a poll interval shorter than the first wait wins")
                .isEqualTo(Duration.ofMillis(5));
        assertThat(AdaptivePolling.next(Duration.ofDays(1), poll, false))
                .as("a previous wait above the interval (the start) gives the interval")
                .isEqualTo(poll);
    }

    @Test
    void badArguments_areRejected() {
        assertThatThrownBy(() -> AdaptivePolling.next(null, Duration.ofSeconds(1), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be null");
        assertThatThrownBy(() -> AdaptivePolling.next(Duration.ZERO, Duration.ZERO, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pollInterval must be positive, but was PT0S");
    }
}
