package io.outbox4j.publisher.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

/** The rules of the encoding and of the error mapping that need no server. */
class EntryEncoderTest {
    private static final String URL = "http://127.0.0.1:1/000000000000/q";

    @Test
    @DisplayName("entry ids keep only SQS's characters, stay within 80 and are unique by position")
    void entryId_followsSqsRules() {
        assertThat(EntryEncoder.entryId(3, "order/42:créé")).isEqualTo("3-order_42_cr__");
        String long1 = EntryEncoder.entryId(0, "a".repeat(255));
        String long2 = EntryEncoder.entryId(1, "a".repeat(255));
        assertThat(long1).hasSize(80).matches("[A-Za-z0-9_-]+").isNotEqualTo(long2);
    }

    @Test
    @DisplayName("FIFO ids: valid values pass as they are, others become a stable sha256 digest")
    void fifoId_hashesOnlyWhatSqsRefuses() {
        assertThat(EntryEncoder.fifoId("customer-1")).isEqualTo("customer-1");
        assertThat(EntryEncoder.fifoId("x".repeat(128))).isEqualTo("x".repeat(128));
        assertThat(EntryEncoder.fifoId("x".repeat(129)))
                .startsWith("sha256-")
                .hasSize(71)
                .isEqualTo(EntryEncoder.fifoId("x".repeat(129)));
        assertThat(EntryEncoder.fifoId("has space")).startsWith("sha256-");
        assertThat(EntryEncoder.fifoId("clé"))
                .startsWith("sha256-")
                .isNotEqualTo(EntryEncoder.fifoId("cle"));
    }

    @Test
    @DisplayName("text bodies: valid UTF-8 of SQS characters only")
    void textOrNull_acceptsOnlySqsText() {
        assertThat(EntryEncoder.textOrNull("héllo\t\r\n😀".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo("héllo\t\r\n😀");
        assertThat(EntryEncoder.textOrNull(new byte[] {(byte) 0xC3}))
                .isNull(); // truncated sequence
        assertThat(EntryEncoder.textOrNull(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}))
                .isNull(); // surrogate
        assertThat(EntryEncoder.textOrNull("\u0007".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(EntryEncoder.textOrNull("\uFFFE".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(EntryEncoder.textOrNull(new byte[0])).isNull();
    }

    @Test
    @DisplayName(
            "the size counts the body and each attribute's name, type and value in UTF-8 bytes")
    void size_countsLikeSqs() {
        Message m = Message.builder().id("i").topic("t").module("m").payload("é").build();
        var entry = new EntryEncoder(1024, null).encode(0, m, URL);
        int attributes =
                entry.request().messageAttributes().entrySet().stream()
                        .mapToInt(
                                e ->
                                        e.getKey().length()
                                                + "String".length()
                                                + e.getValue().stringValue().length())
                        .sum();
        assertThat(entry.bytes()).isEqualTo(2 + attributes);
        assertThat(EntryEncoder.utf8Length("a😀é\uD800")).isEqualTo(1 + 4 + 2 + 3);
    }

    @Test
    @DisplayName("a metadata value with a character SQS refuses fails that message permanently")
    void refusedCharacterInAttribute_isPermanent() {
        Message m = Message.builder().id("id\uFFFF").topic("t").module("m").build();
        try {
            new EntryEncoder(1024, null).encode(0, m, URL);
            throw new AssertionError("expected a failure");
        } catch (RuntimeException e) {
            assertThat(PublishOutcome.failed(e).isPermanent()).isTrue();
            assertThat(e).hasMessageContaining("U+FFFF").hasMessageContaining("outbox-id");
        }
    }

    @Test
    @DisplayName("requests hold at most 10 entries and at most maxBytes in all, in order")
    void split_bothLimits() {
        EntryEncoder encoder = new EntryEncoder(SqsPublisher.MAX_MESSAGE_BYTES, null);
        java.time.Instant at = java.time.Instant.parse("2025-01-01T00:00:00.123456Z");
        List<EntryEncoder.Entry> entries =
                IntStream.range(0, 23)
                        .mapToObj(
                                i ->
                                        encoder.encode(
                                                i,
                                                Message.builder()
                                                        .id("m" + i)
                                                        .topic("t")
                                                        .module("m")
                                                        .occurredAt(at)
                                                        .payload("x".repeat(i == 5 ? 3700 : 10))
                                                        .build(),
                                                URL))
                        .collect(Collectors.toList());

        var requests = PublishCall.split(entries, 4000);

        // 5 small ones (~166 bytes each), then the 3856-byte one that fits with nothing else, then
        // 10, then the rest
        assertThat(requests).extracting(List::size).containsExactly(5, 1, 10, 7);
        for (int k = 0;
                k + 1 < requests.size();
                k++) { // greedy: the next request's first entry did not fit
            var r = requests.get(k);
            int bytes = r.stream().mapToInt(EntryEncoder.Entry::bytes).sum();
            assertThat(r.size() == 10 || bytes + requests.get(k + 1).get(0).bytes() > 4000)
                    .as("request %d", k)
                    .isTrue();
        }
        assertThat(requests.stream().flatMap(List::stream).map(EntryEncoder.Entry::index))
                .containsExactlyElementsOf(
                        IntStream.range(0, 23).boxed().collect(Collectors.toList()));
        assertThat(requests)
                .allSatisfy(
                        r ->
                                assertThat(r.stream().mapToInt(EntryEncoder.Entry::bytes).sum())
                                        .isLessThanOrEqualTo(4000));
    }

    @Test
    @DisplayName(
            "Failed[] entries: SenderFault=true is permanent, SenderFault=false retryable; both name the message")
    void failedEntry_senderFaultDecides() {
        var sender =
                BatchResultErrorEntry.builder()
                        .id("0-a")
                        .senderFault(true)
                        .code("InvalidParameterValue")
                        .message("bad")
                        .build();
        var server =
                BatchResultErrorEntry.builder()
                        .id("0-a")
                        .senderFault(false)
                        .code("InternalError")
                        .build();

        PublishOutcome permanent = PublishOutcome.failed(Failures.ofEntry(sender, "a", URL));
        PublishOutcome retryable = PublishOutcome.failed(Failures.ofEntry(server, "a", URL));

        assertThat(permanent.isPermanent()).isTrue();
        assertThat(permanent.failure().orElseThrow())
                .hasMessageContaining("'a'")
                .hasMessageContaining("InvalidParameterValue");
        assertThat(retryable.isPermanent()).isFalse();
        assertThat(retryable.failure().orElseThrow()).hasMessageContaining("InternalError");
    }

    /** An error answer of SQS: its HTTP status and its error code. */
    private static AwsServiceException sqsError(int status, String code) {
        return SqsException.builder()
                .statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).build())
                .build();
    }

    @Test
    @DisplayName(
            "whole-request errors: content errors split the batch and are permanent alone; others retry")
    void requestError_classification() {
        var tooLong = sqsError(400, "MessageTooLong");
        var throttled = sqsError(400, "ThrottlingException");
        var internal = sqsError(500, "InternalError");

        assertThat(Failures.isContentError(tooLong)).isTrue();
        assertThat(Failures.isContentError(throttled)).isFalse();
        assertThat(PublishOutcome.failed(Failures.ofRequest(tooLong, URL, 1, true)).isPermanent())
                .isTrue();
        assertThat(PublishOutcome.failed(Failures.ofRequest(tooLong, URL, 3, false)).isPermanent())
                .isFalse();
        assertThat(PublishOutcome.failed(Failures.ofRequest(internal, URL, 1, true)).isPermanent())
                .isFalse();
        assertThat(PublishOutcome.failed(Failures.ofRequest(throttled, URL, 1, true)).isPermanent())
                .isFalse();
    }

    @Test
    @DisplayName("at most 8 attributes even with every optional part present")
    void attributeCount_boundedBelowSqsLimit() {
        Message m =
                Message.builder()
                        .id("i")
                        .topic("t")
                        .module("m")
                        .key("k")
                        .payload(new byte[] {(byte) 0xFF})
                        .headers(
                                IntStream.range(0, 64)
                                        .boxed()
                                        .collect(
                                                Collectors.toMap(
                                                        i -> "h" + i,
                                                        i -> "v",
                                                        (a, b) -> a,
                                                        java.util.LinkedHashMap::new)))
                        .build();
        Map<String, ?> attributes =
                new EntryEncoder(SqsPublisher.MAX_MESSAGE_BYTES, null)
                        .encode(0, m, URL + ".fifo")
                        .request()
                        .messageAttributes();
        assertThat(attributes).hasSize(8);
    }
}
