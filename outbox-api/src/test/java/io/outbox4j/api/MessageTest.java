package io.outbox4j.api;

import static io.outbox4j.api.TestMessages.valid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessageTest {

    @Test
    void build_keepsEveryField() {
        Instant at = Instant.parse("2026-12-02T10:15:30.123456789Z");
        Message m =
                valid().key("customer-7")
                        .contentType("Application/JSON; Charset=UTF-8")
                        .header("trace", "abc")
                        .header("tenant", "t1")
                        .occurredAt(at)
                        .notBefore(at.plusSeconds(60))
                        .build();

        assertThat(m.id()).isEqualTo("order-1");
        assertThat(m.topic()).isEqualTo("orders.created");
        assertThat(m.key()).contains("customer-7");
        assertThat(m.module()).isEqualTo("orders");
        assertThat(m.contentType()).isEqualTo("application/json; charset=utf-8");
        assertThat(m.payloadAsString()).isEqualTo("{}");
        assertThat(m.headers())
                .containsExactly(Map.entry("trace", "abc"), Map.entry("tenant", "t1"));
        assertThat(m.occurredAt()).isEqualTo(Instant.parse("2026-12-02T10:15:30.123456Z"));
        assertThat(m.notBefore()).contains(Instant.parse("2026-12-02T10:16:30.123456Z"));
    }

    @Test
    void payload_isCopiedOnTheWayInAndOut() {
        byte[] given = "abc".getBytes(StandardCharsets.UTF_8);
        Message m = valid().payload(given).build();
        given[0] = 'x';
        m.payload()[1] = 'y';
        assertThat(m.payload()).containsExactly('a', 'b', 'c');
    }

    @Test
    void headers_areUnmodifiableAndKeepOrder() {
        Map<String, String> given = new LinkedHashMap<>();
        given.put("z", "1");
        given.put("a", "2");
        Message m = valid().headers(given).build();
        given.put("late", "3");
        assertThat(m.headers()).containsExactly(Map.entry("z", "1"), Map.entry("a", "2"));
        assertThatThrownBy(() -> m.headers().put("x", "y"))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void missingOrBlankRequiredFields_areRejectedByName() {
        assertThatThrownBy(() -> valid().id(null).build()).hasMessage("id must not be null");
        assertThatThrownBy(() -> valid().topic(" ").build())
                .hasMessage("topic must not be blank, but was ' '");
        assertThatThrownBy(() -> valid().module(null).build())
                .hasMessage("module must not be null");
        assertThatThrownBy(() -> valid().payload((byte[]) null).build())
                .hasMessage("payload must not be null");
    }

    @Test
    void topicWithWhitespace_isRejected() {
        assertThatThrownBy(() -> valid().topic("orders created").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("topic must not contain whitespace, but was 'orders created'");
    }

    @Test
    void idWithControlCharacter_isRejected() {
        assertThatThrownBy(() -> valid().id("a\u0000b").build())
                .hasMessage("id must not contain control characters (found U+0000 at index 1)");
    }

    @Test
    void oversizedPayload_isRejectedWithSizeAndLimit() {
        assertThatThrownBy(() -> valid().payload(new byte[2 * 1024 * 1024]).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payload is 2097152 bytes, over the 1048576 limit");
    }

    @Test
    void payloadLimit_isConfigurable() {
        MessageLimits sqs = MessageLimits.DEFAULTS.withMaxPayloadBytes(256 * 1024);
        assertThatThrownBy(() -> valid().limits(sqs).payload(new byte[256 * 1024 + 1]).build())
                .hasMessage("payload is 262145 bytes, over the 262144 limit");
        assertThat(valid().limits(sqs).payload(new byte[256 * 1024]).build().payloadSize())
                .isEqualTo(262144);
    }

    @Test
    void unlimited_holdsBackNoSize_butStillTheRulesOfTheText() {
        String longTopic = "t".repeat(1000);
        assertThatThrownBy(() -> valid().topic(longTopic).build())
                .hasMessage("topic is 1000 characters, over the 255 limit");
        Message copy =
                valid().limits(MessageLimits.UNLIMITED)
                        .topic(longTopic)
                        .payload(new byte[2 * 1024 * 1024])
                        .build();
        assertThat(copy.topic()).isEqualTo(longTopic);
        assertThatThrownBy(() -> valid().limits(MessageLimits.UNLIMITED).topic(" t").build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void reservedHeaderPrefix_isRejectedInAnyCase() {
        assertThatThrownBy(() -> valid().header("Outbox-Id", "x").build())
                .hasMessage("header name 'Outbox-Id' uses the reserved prefix 'outbox-'");
    }

    @Test
    void headerNameWithCrOrLf_isRejected() {
        assertThatThrownBy(() -> valid().header("a\r\nb", "x").build())
                .hasMessage("header name must not contain CR or LF, but was 'a\\r\\nb'");
    }

    @Test
    void tooManyHeaders_isRejected() {
        Message.Builder b = valid();
        for (int i = 0; i < 65; i++) {
            b.header("h" + i, "v");
        }
        assertThatThrownBy(b::build).hasMessage("headers has 65 entries, over the 64 limit");
    }

    @Test
    void malformedContentType_isRejected() {
        assertThatThrownBy(() -> valid().contentType("json").build())
                .hasMessage(
                        "contentType must be a media type like 'application/json', but was 'json'");
        assertThatThrownBy(() -> valid().contentType("text/plain; charset").build())
                .hasMessage(
                        "contentType has a malformed parameter 'charset' in 'text/plain; charset'");
    }

    @Test
    void contentTypes_areCheckedAndNormalisedAlike_whetherSeenBeforeOrNot_pastTheCacheToo() {
        for (int round = 0; round < 2; round++) {
            assertThat(valid().contentType("Text/Plain; Charset=UTF-8").build().contentType())
                    .as("round %d", round)
                    .isEqualTo("text/plain; charset=utf-8");
            assertThatThrownBy(() -> valid().contentType("json").build())
                    .as("a rejected value is rejected again (round %d)", round)
                    .hasMessageContaining("must be a media type");
        }
        // more distinct values than the cache keeps: each still normalised and checked
        for (int i = 0; i < 300; i++) {
            assertThat(valid().contentType("Application/X-Type-" + i).build().contentType())
                    .isEqualTo("application/x-type-" + i);
            int n = i;
            assertThatThrownBy(() -> valid().contentType("application/x-" + n + "; bad").build())
                    .hasMessageContaining("malformed parameter");
        }
    }

    @Test
    void equality_coversPayloadBytes_andToStringHidesPayload() {
        Instant at = Instant.parse("2026-01-01T00:00:00Z");
        Message a = valid().occurredAt(at).payload("secret").build();
        Message b = valid().occurredAt(at).payload("secret").build();
        Message c = valid().occurredAt(at).payload("other!").build();
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b).isNotEqualTo(c);
        assertThat(a.toString()).doesNotContain("secret").contains("6 bytes");
        assertThat(a.toBuilder().build()).isEqualTo(a);
    }
}
