package io.outbox4j.spring.boot;

import org.jspecify.annotations.Nullable;

/**
 * The relay is enabled but nothing says where it publishes; {@link OutboxFailureAnalyzer} explains.
 */
final class NoPublisherException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** The named outbox whose relay has no publisher, or null for the single outbox. */
    private final @Nullable String outbox;

    NoPublisherException(@Nullable String outbox) {
        super(
                outbox == null
                        ? "outbox4j: the relay is enabled but has no publisher: set"
                                + " outbox4j.publisher.kafka.bootstrap-servers, outbox4j.publisher.rabbitmq.uri or"
                                + " outbox4j.publisher.sqs.endpoint/region, declare a io.outbox4j.api.Publisher bean,"
                                + " or set outbox4j.relay.enabled=false if the relay runs elsewhere"
                        : "outbox4j: the relay of outbox '"
                                + outbox
                                + "' is enabled but has no publisher: set "
                                + prefix(outbox)
                                + "publisher.kafka.bootstrap-servers (or .rabbitmq.uri, .sqs.endpoint/region)"
                                + " or "
                                + prefix(outbox)
                                + "publisher-bean, declare one io.outbox4j.api.Publisher bean or"
                                + " outbox4j.publisher.* for every outbox, or set "
                                + prefix(outbox)
                                + "relay.enabled=false if the relay runs elsewhere");
        this.outbox = outbox;
    }

    /** The named outbox, or null for the single outbox. */
    @Nullable String outbox() {
        return outbox;
    }

    static String prefix(String outbox) {
        return NamedOutboxes.PREFIX + "." + outbox + ".";
    }
}
