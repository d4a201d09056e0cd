package io.outbox4j.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a relay without a publisher into Boot's "APPLICATION FAILED TO START" report. */
final class OutboxFailureAnalyzer extends AbstractFailureAnalyzer<NoPublisherException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoPublisherException cause) {
        String outbox = cause.outbox();
        if (outbox == null) {
            return new FailureAnalysis(
                    "outbox4j's relay is enabled (outbox4j.relay.enabled, true by default) but no"
                            + " publisher is configured, so it would have nowhere to publish.",
                    "Set one of outbox4j.publisher.kafka.bootstrap-servers,"
                            + " outbox4j.publisher.rabbitmq.uri or outbox4j.publisher.sqs.endpoint"
                            + " (or .region), declare a bean of type io.outbox4j.api.Publisher, or set"
                            + " outbox4j.relay.enabled=false if another process relays this outbox.",
                    cause);
        }
        String p = NoPublisherException.prefix(outbox);
        return new FailureAnalysis(
                "The relay of outbox4j's outbox '"
                        + outbox
                        + "' is enabled ("
                        + p
                        + "relay.enabled, true by default) but no publisher is configured for it,"
                        + " so it would have nowhere to publish.",
                "Set one of "
                        + p
                        + "publisher.kafka.bootstrap-servers, "
                        + p
                        + "publisher.rabbitmq.uri or "
                        + p
                        + "publisher.sqs.endpoint (or .region); or name a Publisher bean with "
                        + p
                        + "publisher-bean; or give every outbox the same publisher with"
                        + " outbox4j.publisher.* or a single bean of type io.outbox4j.api.Publisher;"
                        + " or set "
                        + p
                        + "relay.enabled=false if another process relays this outbox.",
                cause);
    }
}
