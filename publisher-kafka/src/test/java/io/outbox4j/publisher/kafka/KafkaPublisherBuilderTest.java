package io.outbox4j.publisher.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Configuration checks: settings that would weaken durability are refused unless explicitly
 * allowed. A producer connects lazily, so no broker is needed to build one (the address below has
 * nothing listening).
 */
class KafkaPublisherBuilderTest {
    private static final String NOWHERE = "127.0.0.1:1";

    private static KafkaPublisher.Builder builder() {
        return KafkaPublisher.builder().bootstrapServers(NOWHERE);
    }

    @Test
    void build_withDefaults_setsDurabilityExplicitly() {
        Map<String, Object> config = ProducerSettings.resolve(NOWHERE, Map.of(), false);

        assertThat(config)
                .containsEntry("acks", "all")
                .containsEntry("enable.idempotence", true)
                .containsEntry("delivery.timeout.ms", 30_000)
                .containsEntry("max.block.ms", 30_000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "1"})
    void build_refusesAcksBelowAll(String acks) {
        assertThatThrownBy(() -> builder().producerProperty("acks", acks).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("acks=" + acks + " weakens durability")
                .hasMessageContaining("allowWeakerDurability()");
    }

    @Test
    void build_refusesIdempotenceOff() {
        assertThatThrownBy(() -> builder().producerProperty("enable.idempotence", "false").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("enable.idempotence=false weakens durability");
    }

    @Test
    void build_acceptsWeakerSettings_whenExplicitlyAllowed() {
        assertThatCode(
                        () ->
                                builder()
                                        .producerProperty("acks", "1")
                                        .allowWeakerDurability()
                                        .build()
                                        .close())
                .doesNotThrowAnyException();
        assertThat(ProducerSettings.resolve(NOWHERE, Map.of("acks", "1"), true))
                .as("lowering acks turns the idempotent producer off, which requires acks=all")
                .containsEntry("enable.idempotence", false);
    }

    @Test
    void build_acceptsExplicitAllSpellings() {
        assertThatCode(() -> builder().producerProperty("acks", "-1").build().close())
                .doesNotThrowAnyException();
        assertThatCode(
                        () ->
                                builder()
                                        .producerProperties(
                                                Map.of(
                                                        "acks",
                                                        "all",
                                                        "compression.type",
                                                        "lz4",
                                                        "linger.ms",
                                                        20))
                                        .build()
                                        .close())
                .doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"key.serializer", "value.serializer", "transactional.id"})
    void build_refusesSettingsThePublisherOwns(String name) {
        assertThatThrownBy(() -> builder().producerProperty(name, "x").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + name + "' cannot be set");
    }

    @Test
    void build_withoutBootstrapServers_saysWhatIsMissing() {
        assertThatThrownBy(() -> KafkaPublisher.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bootstrapServers must be set");
    }

    @Test
    void build_withBootstrapServersTwice_refusesTheConflict() {
        assertThatThrownBy(
                        () -> builder().producerProperty("bootstrap.servers", "other:9092").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("given twice");
    }

    @Test
    void build_withAnInvalidKafkaValue_namesIt() {
        assertThatThrownBy(() -> builder().producerProperty("linger.ms", "soon").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("linger.ms");
    }

    @Test
    void build_withDeliveryTimeoutBelowLingerPlusRequestTimeout_isRefused() {
        assertThatThrownBy(
                        () ->
                                builder()
                                        .deliveryTimeout(Duration.ofSeconds(5))
                                        .producerProperty("request.timeout.ms", 10_000)
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("deliveryTimeout (delivery.timeout.ms) must be at least");
    }

    @Test
    void build_withShortDeliveryTimeout_shortensTheRequestTimeoutToFit() {
        Map<String, Object> config =
                ProducerSettings.resolve(NOWHERE, Map.of("delivery.timeout.ms", 5_000), false);

        assertThat(config)
                .containsEntry("request.timeout.ms", 4_995)
                .containsEntry("max.block.ms", 5_000);
    }

    @Test
    void deliveryTimeout_mustBePositive() {
        assertThatThrownBy(() -> builder().deliveryTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("deliveryTimeout must be positive, but was PT0S");
    }

    @Test
    void build_withAGivenProducer_refusesProducerPropertiesToo() {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(
                        Map.of("bootstrap.servers", NOWHERE, "max.block.ms", 200),
                        new ByteArraySerializer(),
                        new ByteArraySerializer())) {
            assertThatThrownBy(
                            () ->
                                    KafkaPublisher.builder()
                                            .producer(producer)
                                            .producerProperty("acks", "all")
                                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not both");
            KafkaPublisher publisher = KafkaPublisher.builder().producer(producer).build();
            publisher.close();
            assertThatCode(() -> producer.send(new ProducerRecord<>("x", new byte[0])))
                    .as("the caller's producer stays open")
                    .doesNotThrowAnyException();
        }
    }

    @Test
    void publish_rejectsBadArguments() {
        try (KafkaPublisher publisher = builder().build()) {
            assertThatThrownBy(() -> publisher.publish(null, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("messages");
            assertThatThrownBy(() -> publisher.publish(java.util.List.of(), Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("timeout must be positive");
            assertThat(publisher.publish(java.util.List.of(), Duration.ofSeconds(1))).isEmpty();
        }
    }
}
