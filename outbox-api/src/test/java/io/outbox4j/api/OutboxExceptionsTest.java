package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class OutboxExceptionsTest {
    @Test
    void retryAfter_isARetryableFailure_thatCarriesItsDelay() {
        RetryAfterException e = new RetryAfterException("throttled", Duration.ofSeconds(3), null);
        assertThat(e).isInstanceOf(RetryableFailureException.class);

        PublishOutcome outcome = PublishOutcome.failed(e);
        assertThat(outcome.isPermanent()).isFalse();
        assertThat(outcome.retryAfter()).contains(Duration.ofSeconds(3));
    }

    @Test
    void invalidMessage_isAPermanentFailure_soTheRelayDeadLettersIt() {
        InvalidMessageException e = new InvalidMessageException("id over 255 bytes");
        assertThat(e).isInstanceOf(PermanentFailureException.class);
        assertThat(PublishOutcome.failed(new RuntimeException("wrapped", e)).isPermanent())
                .isTrue();
    }

    @Test
    void duplicateInOneBatch_saysSo_notThatTheIdIsAlreadyInTheOutbox() {
        DuplicateMessageException e = DuplicateMessageException.twiceInOneBatch("m-1");
        assertThat(e.messageId()).isEqualTo("m-1");
        assertThat(e)
                .hasMessage(
                        "message id 'm-1' appears twice in one batch, which was not enqueued; ids"
                                + " must be unique");
        assertThat(new DuplicateMessageException("m-2", null))
                .hasMessage("message id 'm-2' is already in the outbox; ids must be unique");
    }

    @Test
    void everySubtype_isAnOutboxException() {
        Throwable cause = new IllegalStateException("driver");
        assertThat(
                        new Throwable[] {
                            new StoreUnavailableException("claim failed", cause),
                            new StaleLeaseException("lease lost"),
                            new DuplicateMessageException("m-1", null),
                            new RetryableFailureException("later"),
                            new PermanentFailureException("never"),
                            new InvalidMessageException("too large", cause)
                        })
                .allSatisfy(e -> assertThat(e).isInstanceOf(OutboxException.class));
        assertThat(new StoreUnavailableException("claim failed", cause))
                .hasMessage("claim failed")
                .hasCause(cause);
    }
}
