package io.outbox4j.engine;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a relay tells operators through slf4j. Logger names (all under {@code io.outbox4j.engine}):
 *
 * <ul>
 *   <li>{@code io.outbox4j.engine.Relay}: start and stop at INFO (owner, batch size, workers,
 *       lease).
 *   <li>{@code io.outbox4j.engine.publish}: publish failures at WARN, summarised per topic and at
 *       most once per {@link Relay#DEFAULT_FAILURE_LOG_INTERVAL} per topic (failures since the last
 *       line, total, last error, next retry).
 *   <li>{@code io.outbox4j.engine.deadletter}: each dead letter at WARN (id, topic, key, attempt,
 *       reason).
 *   <li>{@code io.outbox4j.engine.store}: store failures at WARN with the driver's own message (the
 *       first of each kind per batch; the rest counted at the end of the batch).
 * </ul>
 *
 * Never a payload or a header value: only ids, keys, topics and error texts.
 */
final class RelayLog {
    static final Logger LIFECYCLE = LoggerFactory.getLogger("io.outbox4j.engine.Relay");
    static final Logger PUBLISH = LoggerFactory.getLogger("io.outbox4j.engine.publish");
    static final Logger DEAD_LETTER = LoggerFactory.getLogger("io.outbox4j.engine.deadletter");
    static final Logger STORE = LoggerFactory.getLogger("io.outbox4j.engine.store");

    /** Topics tracked at once; past this, topics without pending failures are forgotten. */
    private static final int MAX_TOPICS = 1_000;

    private final String owner;
    private final Duration interval;
    private final Map<String, TopicFailures> topics = new LinkedHashMap<>();

    RelayLog(String owner, Duration interval) {
        this.owner = owner;
        this.interval = interval;
    }

    void started(Settings s) {
        LIFECYCLE.info(
                "relay '{}' started: batch {} to {}, in flight up to {}, workers {}, lease {}"
                        + " (renewed every {}), delivery timeout {}, poll interval {}, wake-up"
                        + " window {}, max attempts {}",
                owner,
                s.minBatchSize(),
                s.batchSize(),
                s.maxInFlight(),
                s.workers(),
                Durations.format(s.lease()),
                Durations.format(s.renewEvery()),
                Durations.format(s.deliveryTimeout()),
                Durations.format(s.pollInterval()),
                Durations.format(s.wakeUpWindow()),
                s.maxAttempts());
    }

    void stopped(Settings s, long published, long deadLettered) {
        LIFECYCLE.info(
                "relay '{}' stopped: batch {}, workers {}, lease {}; published {}, dead-lettered {}"
                        + " since start",
                owner,
                s.batchSize(),
                s.workers(),
                Durations.format(s.lease()),
                published,
                deadLettered);
    }

    void claimFailed(int inARow, Duration pause, Throwable error) {
        STORE.warn(
                "relay '{}': claim failed ({} in a row), next try in {}: {}",
                owner,
                inARow,
                Durations.format(pause),
                describe(error));
        STORE.debug("claim failure of relay '{}'", owner, error);
    }

    void storeFailed(String what, Throwable error) {
        STORE.warn("relay '{}': store failed to {}: {}", owner, what, describe(error));
        STORE.debug("store failure of relay '{}'", owner, error);
    }

    void moreStoreFailures(String what, int more) {
        STORE.warn("relay '{}': store failed to {} {} more times in this batch", owner, what, more);
    }

    void leaseUnprovable(Instant provenUntil, int givenBack) {
        STORE.warn(
                "relay '{}': leases could not be renewed (last confirmed until {}); {} message(s)"
                        + " not handed to the publisher but given back",
                owner,
                provenUntil,
                givenBack);
    }

    void deadLettered(Delivery d, String reason) {
        Message m = d.message();
        DEAD_LETTER.warn(
                "relay '{}' dead-lettered message {} (topic '{}', key {}, attempt {}): {}",
                owner,
                m.id(),
                m.topic(),
                m.key().map(k -> "'" + k + "'").orElse("none"),
                d.attempt(),
                reason);
    }

    /**
     * Counts a failed publish of {@code topic}; logs the topic's summary if its last line is at
     * least the interval old.
     */
    synchronized void publishFailed(
            String topic, String error, @Nullable Instant nextRetry, Instant now) {
        TopicFailures f = topics.get(topic);
        if (f == null) {
            if (topics.size() >= MAX_TOPICS) {
                forgetQuietTopics();
            }
            f = new TopicFailures();
            topics.put(topic, f);
        }
        f.pending++;
        f.total++;
        f.lastError = error;
        f.nextRetry = nextRetry;
        if (f.nextLineAt == null || !now.isBefore(f.nextLineAt)) {
            line(topic, f, now);
        }
    }

    /**
     * Logs the pending summaries whose interval has passed, or all of them when {@code all}
     * (shutdown).
     */
    synchronized void flushFailures(Instant now, boolean all) {
        for (Map.Entry<String, TopicFailures> e : topics.entrySet()) {
            TopicFailures f = e.getValue();
            if (f.pending > 0 && (all || f.nextLineAt == null || !now.isBefore(f.nextLineAt))) {
                line(e.getKey(), f, now);
            }
        }
    }

    private void line(String topic, TopicFailures f, Instant now) {
        PUBLISH.warn(
                "relay '{}': publish to topic '{}' failed {}{} ({} since start); last error: {};"
                        + " next retry {}",
                owner,
                topic,
                f.pending == 1 ? "once" : f.pending + " times",
                f.lastLineAt == null
                        ? ""
                        : " in the last " + Durations.format(sinceLast(f.lastLineAt, now)),
                f.total,
                f.lastError,
                f.nextRetry == null
                        ? "none (dead-lettered)"
                        : "in "
                                + Durations.format(sinceLast(now, f.nextRetry))
                                + " ("
                                + f.nextRetry
                                + ")");
        f.pending = 0;
        f.lastLineAt = now;
        f.nextLineAt = now.plus(interval);
    }

    private static Duration sinceLast(Instant lastLineAt, Instant now) {
        Duration d = Duration.between(lastLineAt, now);
        return d.isNegative() ? Duration.ZERO : d;
    }

    private void forgetQuietTopics() {
        for (Iterator<TopicFailures> it = topics.values().iterator(); it.hasNext(); ) {
            if (it.next().pending == 0) {
                it.remove();
            }
        }
    }

    /** The error with its root cause, whose message is usually the driver's own. */
    static String describe(Throwable error) {
        Throwable root = error;
        for (int depth = 0; root.getCause() != null && depth < 32; depth++) {
            root = root.getCause();
        }
        String text = Verdicts.describe(error);
        return root == error ? text : text + " (cause: " + Verdicts.describe(root) + ")";
    }

    private static final class TopicFailures {
        int pending;
        long total;
        String lastError = "";
        @Nullable Instant nextRetry;
        @Nullable Instant lastLineAt;
        @Nullable Instant nextLineAt;
    }
}
