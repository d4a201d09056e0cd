package io.outbox4j.faulttests;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.rabbitmq.RabbitMqPublisher;
import io.outbox4j.testservices.RabbitMqServer;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A durable queue on the test RabbitMQ broker (the relays publish persistent messages to it through
 * the default exchange, with publisher confirms), counted by a consumer that acknowledges after
 * recording and recovers its connection by itself when the broker restarts (the client's automatic
 * recovery). A message read twice after a recovery counts as a duplicate, not as a second message.
 */
final class RabbitSink implements Sink {
    private final RabbitMqServer rabbit;
    private final Connection connection;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private RabbitSink(RabbitMqServer rabbit, Connection connection) {
        this.rabbit = rabbit;
        this.connection = connection;
    }

    static Sink open(String queue, KeyedLoad load, DeliveryLedger ledger) {
        RabbitMqServer rabbit = RabbitMqServer.shared();
        ConnectionFactory factory = new ConnectionFactory();
        try {
            factory.setUri(rabbit.uri());
            factory.setAutomaticRecoveryEnabled(true);
            factory.setTopologyRecoveryEnabled(true);
            factory.setNetworkRecoveryInterval(250);
            Connection connection = factory.newConnection("fault-tally-" + queue);
            RabbitSink sink = new RabbitSink(rabbit, connection);
            Channel channel = connection.createChannel();
            channel.queueDeclare(queue, true, false, false, null);
            channel.basicQos(500);
            channel.basicConsume(
                    queue,
                    false,
                    new DefaultConsumer(channel) {
                        @Override
                        public void handleDelivery(
                                String tag,
                                Envelope envelope,
                                com.rabbitmq.client.AMQP.BasicProperties properties,
                                byte[] body)
                                throws IOException {
                            try {
                                int seq = KeyedLoad.seqOfPayload(body);
                                ledger.record(
                                        seq < 0 ? "" : load.key(seq),
                                        seq,
                                        "?",
                                        System.currentTimeMillis());
                            } catch (RuntimeException e) {
                                sink.failure.compareAndSet(null, e);
                            }
                            getChannel().basicAck(envelope.getDeliveryTag(), false);
                        }
                    });
            return sink;
        } catch (Exception e) {
            throw new IllegalStateException("could not start counting queue " + queue, e);
        }
    }

    @Override
    public Publisher publisher(String relay, RelaySettings settings) {
        return RabbitMqPublisher.builder()
                .uri(rabbit.uri())
                .connectionName("fault-" + relay)
                .build();
    }

    @Override
    public void checkHealthy() {
        Sink.throwIfFailed(failure.get());
    }

    @Override
    public void close() {
        try {
            connection.close(2_000);
        } catch (IOException | RuntimeException e) {
            // the broker may be down at the end of a failed drill; nothing to keep
        }
    }
}
