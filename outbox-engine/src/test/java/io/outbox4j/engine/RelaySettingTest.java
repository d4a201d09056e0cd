package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.Backoff;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelaySettingTest {
    @Test
    void allListsEveryPublicSettingOnce() throws IllegalAccessException {
        List<RelaySetting<?>> declared = new ArrayList<>();
        for (Field f : RelaySetting.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == RelaySetting.class) {
                declared.add((RelaySetting<?>) f.get(null));
            }
        }
        assertThat(RelaySetting.all()).containsExactlyInAnyOrderElementsOf(declared);
    }

    @Test
    void namesKeysAndEnvironmentNamesFollowOneRule() {
        assertThat(RelaySetting.BATCH_SIZE.name()).isEqualTo("batchSize");
        assertThat(RelaySetting.BATCH_SIZE.key()).isEqualTo("batch-size");
        assertThat(RelaySetting.MAX_PUBLISH_STALL.envName()).isEqualTo("MAX_PUBLISH_STALL");
        assertThat(RelaySetting.LEASE.key()).isEqualTo("lease");
    }

    @Test
    void everyFixedDefaultIsWithinItsBoundsAndIsWhatTheBuilderUses() {
        for (RelaySetting<?> s : RelaySetting.all()) {
            s.defaultValue().ifPresent(v -> assertThat(check(s, v)).as(s.name()).isEqualTo(v));
            assertThat(s.doc()).as(s.name()).isNotBlank().doesNotEndWith(".");
        }
        Settings built =
                Relay.builder(new InMemoryOutboxStore(), Fixtures.ScriptedPublisher.accepting())
                        .build()
                        .pipeline()
                        .settings();
        assertThat(built.batchSize()).isEqualTo(RelaySetting.BATCH_SIZE.defaultValue().get());
        assertThat(built.workers()).isEqualTo(RelaySetting.WORKERS.defaultValue().get());
        assertThat(built.lease()).isEqualTo(RelaySetting.LEASE.defaultValue().get());
        assertThat(built.wakeUpWindow())
                .isEqualTo(RelaySetting.WAKE_UP_WINDOW.defaultValue().get());
        assertThat(built.pollInterval()).isEqualTo(RelaySetting.POLL_INTERVAL.defaultValue().get());
        assertThat(built.maxAttempts()).isEqualTo(RelaySetting.MAX_ATTEMPTS.defaultValue().get());
    }

    @Test
    void theBackoffDefaultsAreTheEnginesBackoffDefault() {
        Backoff fromSettings =
                Backoff.exponential(
                        RelaySetting.BACKOFF_BASE.defaultValue().get(),
                        RelaySetting.BACKOFF_MAX.defaultValue().get());
        for (int attempt = 1; attempt <= 20; attempt++) {
            assertThat(fromSettings.delay(attempt))
                    .as("delay after attempt %d", attempt)
                    .isEqualTo(Backoff.DEFAULT.delay(attempt));
        }
    }

    @Test
    void checkNamesTheSettingItsBoundsAndTheValue() {
        assertThatThrownBy(() -> RelaySetting.LEASE.check(Duration.ofMillis(500)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease must be between 1s and 30m, but was 500ms");
        assertThatThrownBy(() -> RelaySetting.WORKERS.check(null))
                .hasMessage("workers must not be null");
        assertThat(RelaySetting.WORKERS.bounds()).isEqualTo("between 1 and 1024");
        assertThat(RelaySetting.OWNER.bounds()).isEmpty();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Comparable<T>> T check(RelaySetting<T> s, Object value) {
        return s.check((T) value);
    }
}
