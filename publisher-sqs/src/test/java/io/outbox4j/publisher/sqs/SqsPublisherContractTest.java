package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.PublisherContract;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
        private final Publisher publisher;

        SqsContract(boolean fifo, Publisher publisher) {
            this.fifo = fifo;
            this.publisher = publisher;
        }

        @Override
        protected Publisher publisher() {
            return publisher;
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
                                            SqsTestSupport.key(m)))
                    .collect(Collectors.toList());
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
            super(false, SqsPublisher.builder().client(SqsTestSupport.client()).build());
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
                    SqsPublisher.builder()
                            .asyncClient(SqsTestSupport.asyncClient())
                            .fifoDefaultGroupId("tck-default")
                            .build());
        }
    }
}
