package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class PublisherApplyMapperTest {
    private static final Message M =
            Message.builder().id("m-1").topic("orders").module("orders").payload("{}").build();

    @Test
    void returnsWhatTheMapperReturns_nullIncluded() {
        assertThat(Publisher.<String>applyMapper(m -> m.topic() + ".v2", "topicMapper", M))
                .isEqualTo("orders.v2");
        assertThat(Publisher.<String>applyMapper(m -> null, "topicMapper", M)).isNull();
    }

    @Test
    void aMapperThatThrows_failsTheMessagePermanently_namingTheSettingAndTheMessage() {
        IllegalStateException bug = new IllegalStateException("no such tenant");
        assertThatThrownBy(() -> Publisher.applyMapper(throwing(bug), "queueMapper", M))
                .isExactlyInstanceOf(PermanentFailureException.class)
                .hasCause(bug)
                .hasMessage(
                        "queueMapper threw for message 'm-1' (topic 'orders'): "
                                + bug
                                + "; it would throw again on every retry");
    }

    @Test
    void retryAfterAndPermanentFailure_thrownOnPurpose_passAsTheyAre() {
        RetryAfterException later = new RetryAfterException("later", Duration.ofSeconds(5), null);
        assertThatThrownBy(() -> Publisher.applyMapper(throwing(later), "topicMapper", M))
                .isSameAs(later);
        PermanentFailureException never = new PermanentFailureException("never");
        assertThatThrownBy(() -> Publisher.applyMapper(throwing(never), "topicMapper", M))
                .isSameAs(never);
    }

    private static Function<Message, String> throwing(RuntimeException e) {
        return m -> {
            throw e;
        };
    }
}
