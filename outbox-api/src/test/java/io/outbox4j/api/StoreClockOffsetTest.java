package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class StoreClockOffsetTest {
    private static final Instant T = Instant.parse("2026-12-05T10:00:00Z");

    @Test
    void zeroUntilTheFirstRenewal_thenTheOffsetAtTheMiddleOfTheRoundTrip() {
        StoreClockOffset offset = new StoreClockOffset();
        assertThat(offset.get()).isZero();
        assertThat(offset.toStoreTime(T)).isEqualTo(T);

        // sent at T, back at T+100ms: the store's 30 s ahead clock read T+30.05s at the middle
        assertThat(offset.sync(T, T.plusMillis(30_050), T.plusMillis(100))).isTrue();

        assertThat(offset.get()).isEqualTo(Duration.ofSeconds(30));
        assertThat(offset.toStoreTime(T)).isEqualTo(T.plusSeconds(30));
    }

    @Test
    void aSlowRenewalIsTakenOnlyWhenFasterThanTheOneInUse() {
        StoreClockOffset offset = new StoreClockOffset();
        offset.sync(T, T.plusMillis(50), T.plusMillis(100)); // offset 0, 100 ms round trip

        // 27 s waiting for a pool connection: the store's time could be anywhere in it
        assertThat(offset.sync(T, T.plusSeconds(1), T.plusSeconds(27))).isFalse();
        assertThat(offset.get()).isZero();

        // a fast one always replaces
        assertThat(offset.sync(T, T.minusMillis(1_990), T.plusMillis(20))).isTrue();
        assertThat(offset.get()).isEqualTo(Duration.ofSeconds(-2));
    }

    @Test
    void whileOnlySlowRenewalsCame_eachFasterOneImprovesTheEstimate() {
        StoreClockOffset offset = new StoreClockOffset();
        assertThat(offset.sync(T, T.plusSeconds(5), T.plusSeconds(10))).isTrue(); // first: taken
        assertThat(offset.sync(T, T.plusSeconds(4), T.plusSeconds(12))).isFalse(); // slower
        assertThat(offset.sync(T, T.plusSeconds(1), T.plusSeconds(2))).isTrue(); // faster
        assertThat(offset.get()).isZero();
    }

    @Test
    void refusesNullsAndAnAnswerBeforeItsRequest() {
        StoreClockOffset offset = new StoreClockOffset();
        assertThatThrownBy(() -> offset.sync(T, T, T.minusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("received must not be before sent");
        assertThatThrownBy(() -> offset.sync(null, T, T))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sent");
        assertThat(offset.get()).isZero();
    }
}
