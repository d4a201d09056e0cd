package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin kit's rules of the group "Last error"; {@link OutboxAdminContract} runs them as its
 * {@code @Nested} class {@code LastError}.
 */
abstract class AdminLastErrorRules extends AdminRules {
    AdminLastErrorRules(OutboxAdminContract kit) {
        super(kit);
    }

    /** A new message, committed, claimed and released (due at once) with {@code error}. */
    private Message releasedOnce(String error) {
        Message m = message();
        committed(m);
        claimAndRelease(m, error);
        return m;
    }

    /**
     * Claims {@code m}, which must be claimable, and releases it (due at once) with {@code error}.
     */
    private void claimAndRelease(Message m, String error) {
        Delivery d = claimed(claimEach(m), m);
        store().release(new Release(OWNER, d.receipt(), now(), error));
    }

    @Test
    @DisplayName("lastError is the error of the last release")
    void required_lastErrorIsTheErrorOfTheLastRelease() {
        Message m = releasedOnce("tck: broker down (1)");
        assertThat(admin().lastError(m.id()))
                .as("lastError of '%s' after a release must be that release's error", m.id())
                .contains("tck: broker down (1)");
        String long2 = "tck: timeout (2) " + "x".repeat(Release.MAX_ERROR_LENGTH - 17);
        claimAndRelease(m, long2);
        Optional<String> last = admin().lastError(m.id());
        assertThat(last)
                .as(
                        "lastError of '%s' after a second release must be the second error, exactly"
                                + " (%d characters), but your store said %s",
                        m.id(),
                        long2.length(),
                        last.map(
                                e ->
                                        e.length()
                                                + " characters: "
                                                + e.substring(0, Math.min(40, e.length()))
                                                + "…"))
                .contains(long2);
    }

    @Test
    @DisplayName("lastError of a dead letter is its reason")
    void required_lastErrorOfADeadLetterIsItsReason() {
        Message m = releasedOnce("tck: broker down");
        deadLetterNow(m);
        Optional<String> last = admin().lastError(m.id());
        assertThat(last)
                .as(
                        "lastError of the dead letter '%s' must be its reason, not the earlier release"
                                + " error, but your store said %s",
                        m.id(), last)
                .contains(reasonOf(m));
    }

    @Test
    @DisplayName("lastError is empty for an unknown message and for one that never failed")
    void required_lastErrorIsEmptyForUnknownOrNeverFailedMessages() {
        Message ready = message();
        Message leased = message();
        committed(leased);
        claimEach(leased);
        committed(ready);
        for (String id : List.of(UNKNOWN_ID, ready.id(), leased.id())) {
            Optional<String> last = admin().lastError(id);
            assertThat(last)
                    .as(
                            "'%s' never failed (unknown, ready or leased), so lastError must be empty,"
                                    + " but your store said %s",
                            id, last)
                    .isEmpty();
        }
    }
}
