package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.PublisherContract;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;

/**
 * The publisher contract kit against SQS: a standard queue through the sync client, a FIFO queue
 * through the async one.
 */
class SqsPublisherContractTest {

    /**
     * What both variants share: a queue per topic, read back through the documented attribute
     * format.
     */
    abstract static class SqsContract extends PublisherContract {
        private final boolean fifo;
        private final Supplier<Publisher> publishers;
        private final Publisher publisher;

        SqsContract(boolean fifo, Supplier<Publisher> publishers) {
            this.fifo = fifo;
            this.publishers = publishers;
            this.publisher = publishers.get();
        }

        @Override
        protected Publisher publisher() {
            return publisher;
        }

        @Override
        protected Optional<Publisher> closablePublisher() {
            return Optional.of(publishers.get());
        }

        @Override
        protected String newTopic() {
            String name = SqsTestSupport.uniqueName("tck", fifo);
            SqsTestSupport.createQueue(name);
            return name;
        }

        @Override
        protected List<Received> readBack(String topic, int expected, Duration timeout) {
            return SqsTestSupport.receive(SqsTestSupport.queueUrl(topic), expected, timeout)
                    .stream()
                    .map(
                            m ->
                                    new Received(
                                            SqsTestSupport.id(m),
                                            SqsTestSupport.payload(m),
                                            SqsTestSupport.key(m),
                                            attributes(m)))
                    .collect(Collectors.toList());
        }

        private static Map<String, String> attributes(
                software.amazon.awssdk.services.sqs.model.Message m) {
            Map<String, String> attributes = new LinkedHashMap<>();
            m.messageAttributes()
                    .forEach((name, value) -> attributes.put(name, value.stringValue()));
            return attributes;
        }

        @Override
        protected Optional<Message> permanentlyRejectedMessage(String topic) {
            return Optional.of(
                    Message.builder()
                            .limits(MessageLimits.DEFAULTS)
                            .id("too-big-for-sqs")
                            .topic(topic)
                            .module("tck")
                            .key("k")
                            .payload(new byte[SqsPublisher.DEFAULT_MAX_MESSAGE_BYTES])
                            .build());
        }
    }

    @Nested
    class StandardQueue extends SqsContract {
        StandardQueue() {
            super(false, () -> SqsPublisher.builder().client(SqsTestSupport.client()).build());
        }

        @Override
        protected Optional<String> keyOrderUnsupported() {
            return Optional.of(
                    "an SQS standard queue delivers in best-effort order; FIFO queues keep it "
                            + "(see FifoQueue)");
        }
    }

    @Nested
    class FifoQueue extends SqsContract {
        FifoQueue() {
            super(
                    true,
                    () ->
                            SqsPublisher.builder()
                                    .asyncClient(SqsTestSupport.asyncClient())
                                    .fifoDefaultGroupId("tck-default")
                                    .build());
        }
    }
}
