package io.outbox4j.spring.boot;

/**
 * The relay is enabled but nothing says where it publishes; {@link OutboxFailureAnalyzer} explains.
 */
final class NoPublisherException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    NoPublisherException() {
        super(
                "outbox4j: the relay is enabled but has no publisher: set"
                        + " outbox4j.publisher.kafka.bootstrap-servers, outbox4j.publisher.rabbitmq.uri or"
                        + " outbox4j.publisher.sqs.endpoint/region, declare a io.outbox4j.api.Publisher bean,"
                        + " or set outbox4j.relay.enabled=false if the relay runs elsewhere");
    }
}
