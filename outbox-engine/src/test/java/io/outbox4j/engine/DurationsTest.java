package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one text form of durations in messages and logs (JSON carries ISO-8601). */
class DurationsTest {
    @Test
    void format_isShortHumanText_roundedToTheMillisecond() {
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.format(Duration.ofNanos(400))).isEqualTo("400ns");
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofNanos(3_704_778_333L))).isEqualTo("3.705s");
        assertThat(Durations.format(Duration.ofMillis(3700))).isEqualTo("3.7s");
        assertThat(Durations.format(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(Durations.format(Duration.ofSeconds(150))).isEqualTo("2m30s");
        assertThat(Durations.format(Duration.ofMillis(61_934))).isEqualTo("1m1.934s");
        assertThat(Durations.format(Duration.ofMinutes(63))).isEqualTo("63m");
        assertThat(Durations.format(Duration.ofMillis(-1500))).isEqualTo("-1.5s");
    }
}
