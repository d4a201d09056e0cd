package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.RabbitMqServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Test-side access to the real broker: declare queues and exchanges, read back what arrived. */
final class Rabbit {
    private static Connection admin;

    private Rabbit() {}

    static RabbitMqServer server() {
        return RabbitMqServer.shared();
    }

    static RabbitMqPublisher.Builder publisherBuilder() {
        return RabbitMqPublisher.builder().uri(server().uri());
    }

    static ConnectionFactory factory() {
        ConnectionFactory f = new ConnectionFactory();
        f.setAutomaticRecoveryEnabled(false);
        String uri = server().uri();
        try {
            f.setUri(uri);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return f;
    }

    /** A connection for test bookkeeping, re-opened if a test closed every connection. */
    static synchronized Connection admin() {
        if (admin == null || !admin.isOpen()) {
            try {
                admin = factory().newConnection("outbox4j-test-admin");
            } catch (IOException | TimeoutException e) {
                throw new IllegalStateException("cannot connect to " + server(), e);
            }
        }
        return admin;
    }

    interface ChannelWork<T> {
        T run(Channel ch) throws IOException;
    }

    static <T> T withChannel(ChannelWork<T> work) {
        try (Channel ch = admin().createChannel()) {
            return work.run(ch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(e);
        }
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Declares a durable queue (expiring 10 minutes after last use, to keep an external broker
     * tidy).
     */
    static String declareQueue(String prefix, Map<String, Object> arguments) {
        String name = uniqueName(prefix);
        Map<String, Object> args = new HashMap<>(arguments);
        args.putIfAbsent("x-expires", 600_000);
        withChannel(ch -> ch.queueDeclare(name, true, false, false, args));
        return name;
    }

    static String declareQueue(String prefix) {
        return declareQueue(prefix, Map.of());
    }

    static String declareDirectExchange(String prefix) {
        String name = uniqueName(prefix);
        withChannel(ch -> ch.exchangeDeclare(name, "direct", false, true, null));
        return name;
    }

    static void bind(String queue, String exchange, String routingKey) {
        withChannel(ch -> ch.queueBind(queue, exchange, routingKey));
    }

    static long depth(String queue) {
        return withChannel(ch -> ch.messageCount(queue));
    }

    /**
     * Takes (auto-ack) up to {@code expected} messages, waiting at most {@code timeout} for them.
     */
    static List<GetResponse> take(String queue, int expected, Duration timeout) {
        return withChannel(
                ch -> {
                    List<GetResponse> got = new ArrayList<>();
                    BooleanSupplier takeWhatIsThere =
                            () -> {
                                try {
                                    GetResponse r;
                                    while (got.size() < expected
                                            && (r = ch.basicGet(queue, true)) != null) {
                                        got.add(r);
                                    }
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                                return got.size() >= expected;
                            };
                    if (takeWhatIsThere.getAsBoolean() || timeout.isZero()) {
                        return got;
                    }
                    try {
                        Awaitility.await()
                                .dontCatchUncaughtExceptions()
                                .atMost(timeout)
                                .pollInterval(Duration.ofMillis(5))
                                .pollInSameThread() // the channel is this thread's
                                .until(takeWhatIsThere::getAsBoolean);
                    } catch (ConditionTimeoutException e) {
                        // fewer than expected within the timeout: the caller asserts on what came
                    }
                    return got;
                });
    }

    /** Takes everything in the queue now. */
    static List<GetResponse> drain(String queue) {
        return take(queue, Integer.MAX_VALUE, Duration.ZERO);
    }

    static Message message(String topic, String id) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .module("orders")
                .contentType("application/json")
                .payload("{\"id\":\"" + id + "\"}")
                .build();
    }

    static List<Message> messages(String topic, String idPrefix, int n) {
        List<Message> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(message(topic, idPrefix + "-" + i));
        }
        return list;
    }
}
