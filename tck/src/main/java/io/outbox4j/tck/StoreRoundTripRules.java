package io.outbox4j.tck;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Round trip"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code RoundTrip}.
 */
abstract class StoreRoundTripRules extends StoreRules {
    StoreRoundTripRules(OutboxStoreContract kit) {
        super(kit);
    }

    private void assertRoundTrips(Message m) {
        committed(m);
        Delivery d = claimOne(store(), OWNER_A, m);
        assertSameMessage(m, d.message());
    }

    @Test
    @DisplayName("a binary payload (every byte value, invalid UTF-8) comes back byte for byte")
    void required_binaryPayloadRoundTripsByteForByte() {
        byte[] payload = new byte[4096 + 7];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31 + (i >> 8));
        }
        byte[] invalidUtf8 = {
            (byte) 0xc3, (byte) 0x28, (byte) 0xff, 0, (byte) 0xed, (byte) 0xa0, (byte) 0x80
        };
        System.arraycopy(invalidUtf8, 0, payload, 0, invalidUtf8.length);
        assertRoundTrips(
                message().contentType("application/octet-stream").payload(payload).build());
    }

    @Test
    @DisplayName("an empty payload comes back empty")
    void required_emptyPayloadRoundTrips() {
        assertRoundTrips(message().payload(new byte[0]).build());
    }

    @Test
    @DisplayName("a payload of the default limit (1 MiB) comes back byte for byte")
    void optional_payloadOfTheDefaultLimitRoundTrips() {
        Optional<String> reason = largePayloadUnsupported();
        Assumptions.assumeTrue(
                reason.isEmpty(),
                () -> "skipped: largePayloadUnsupported() says " + reason.orElse("nothing"));
        byte[] payload = new byte[MessageLimits.DEFAULT_MAX_PAYLOAD_BYTES];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i ^ (i >>> 9));
        }
        assertRoundTrips(
                message().contentType("application/octet-stream").payload(payload).build());
    }

    @Test
    @DisplayName("headers come back with the same names, values and order, unicode included")
    void required_headersRoundTripInOrder() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("zeta", "last letter first");
        headers.put("Alpha", "mixed Case name");
        headers.put("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        headers.put("empty", "");
        headers.put("ünïcödé-名前", "значение ✓ 😀");
        headers.put("spaces", "  value with spaces inside and around  ");
        headers.put("beta", "b");
        assertRoundTrips(message().headers(headers).build());
    }

    @Test
    @DisplayName("a key comes back when present and stays absent when not")
    void required_keyRoundTripsWhenPresentAndAbsent() {
        Message keyed = message().key("customer-42/ordre-ß").build();
        Message unkeyed = message().build();
        for (Delivery d : leasedByOwnerA(keyed, unkeyed)) {
            assertSameMessage(d.message().id().equals(keyed.id()) ? keyed : unkeyed, d.message());
        }
    }

    @Test
    @DisplayName(
            "topic, module, content type, occurredAt and notBefore come back exactly (microseconds included)")
    void required_metadataRoundTrips() {
        Instant occurred = Instant.parse("2021-03-04T05:06:07.123456Z");
        Instant notBefore =
                now().minus(Duration.ofSeconds(3))
                        .truncatedTo(ChronoUnit.SECONDS)
                        .plusNanos(654_321_000);
        assertRoundTrips(
                message()
                        .topic("tck.orders.v2-créées")
                        .module("billing-module/ünï")
                        .contentType("application/vnd.tck+json; charset=UTF-8; profile=\"x y\"")
                        .occurredAt(occurred)
                        .notBefore(notBefore)
                        .payload("{\"n\":1}")
                        .build());
    }
}
