package io.outbox4j.examples.quickstart;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.rabbitmq.RabbitMqPublisher;
import java.io.IOException;
import java.util.Map;

/** RabbitMQ: events go through the default exchange to a durable queue named after the topic. */
final class RabbitMqTransport implements Transport {
    private final String uri;
    private final RabbitMqPublisher publisher;
    private final Connection connection;

    RabbitMqTransport(String uri) {
        this.uri = uri;
        // tag::rabbitmq-publisher[]
        this.publisher = RabbitMqPublisher.builder().uri(uri).build();
        // end::rabbitmq-publisher[]
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(uri);
            this.connection = factory.newConnection("outbox4j-quickstart-consumer");
        } catch (Exception e) {
            throw new IllegalStateException(
                    "cannot connect to RabbitMQ at " + safe(uri) + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void prepare(String topic, java.time.Duration timeout) {
        try (Channel ch = connection.createChannel()) {
            ch.queueDeclare(topic, true, false, false, Map.of());
        } catch (Exception e) {
            throw new IllegalStateException(
                    "cannot declare queue " + topic + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Publisher publisher() {
        return publisher;
    }

    @Override
    public void startConsumer(String topic, Tally tally) {
        try {
            Channel ch = connection.createChannel();
            ch.basicQos(1000);
            ch.basicConsume(
                    topic,
                    false,
                    new DefaultConsumer(ch) {
                        @Override
                        public void handleDelivery(
                                String tag,
                                Envelope envelope,
                                AMQP.BasicProperties props,
                                byte[] body)
                                throws IOException {
                            Map<String, Object> headers = props.getHeaders();
                            tally.record(
                                    props.getMessageId(),
                                    String.valueOf(headers.get(OutboxHeaders.KEY)),
                                    Long.parseLong(String.valueOf(headers.get(SEQ_HEADER))));
                            ch.basicAck(envelope.getDeliveryTag(), false);
                        }
                    });
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot consume queue " + topic + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String describe() {
        return "RabbitMQ (" + safe(uri) + ")";
    }

    private static String safe(String uri) {
        return uri.replaceAll("//[^@/]*@", "//***@");
    }

    @Override
    public void close() {
        publisher.close();
        try {
            connection.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
