package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.engine.RelaySetting;
import java.time.Duration;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/**
 * The connector's settings that a relay has too take their bounds from the relay settings' one
 * definition ({@link RelaySetting}). Their defaults are the connector's own (a task holds what
 * Kafka has not acknowledged yet, and completes in batches): outbox-kafka-connect/README.md.
 */
class SharedSettingsTest {
    private static String range(String name) {
        return String.valueOf(
                OutboxSourceConnectorConfig.configDef().configKeys().get(name).validator);
    }

    private static String bounds(RelaySetting<Integer> setting) {
        return "[" + setting.min().orElseThrow() + ",...," + setting.max().orElseThrow() + "]";
    }

    private static String millis(RelaySetting<Duration> setting) {
        return "["
                + setting.min().orElseThrow().toMillis()
                + ",...,"
                + setting.max().orElseThrow().toMillis()
                + "]";
    }

    @Test
    void batchSizeInFlightPollIntervalAndLeaseHaveTheRelaysBounds() {
        assertThat(range(OutboxSourceConnectorConfig.BATCH_SIZE))
                .isEqualTo(bounds(RelaySetting.BATCH_SIZE));
        assertThat(range(OutboxSourceConnectorConfig.MAX_IN_FLIGHT))
                .isEqualTo(bounds(RelaySetting.MAX_IN_FLIGHT));
        assertThat(range(OutboxSourceConnectorConfig.POLL_INTERVAL_MS))
                .isEqualTo(millis(RelaySetting.POLL_INTERVAL));
        assertThat(range(OutboxSourceConnectorConfig.LEASE_MS))
                .isEqualTo(millis(RelaySetting.LEASE));
    }

    @Test
    void theDefaultsAreWithinThoseBounds() {
        ConfigDef def = OutboxSourceConnectorConfig.configDef();
        assertThat(RelaySetting.BATCH_SIZE.check(OutboxSourceConnectorConfig.DEFAULT_BATCH_SIZE))
                .isEqualTo(def.defaultValues().get(OutboxSourceConnectorConfig.BATCH_SIZE));
        assertThat(
                        RelaySetting.LEASE.check(
                                Duration.ofMillis(OutboxSourceConnectorConfig.DEFAULT_LEASE_MS)))
                .isEqualTo(
                        Duration.ofMillis(
                                (Long)
                                        def.defaultValues()
                                                .get(OutboxSourceConnectorConfig.LEASE_MS)));
    }
}
