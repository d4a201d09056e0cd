package io.outbox4j.publisher.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * The whole path on real servers: messages committed to a PostgreSQL outbox, moved by the relay,
 * published to a durable RabbitMQ queue with confirms, consumed back.
 */
class PostgresRelayToRabbitMqEndToEndTest {
    private static final int MESSAGES = 20_000;

    @Test
    void
            twentyThousandCommittedMessages_areAllConsumedFromADurableQueue_withTheirIdsAndPayloadsIntact()
                    throws Exception {
        PostgresServer pg = PostgresServer.shared();
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(pg.createDatabase("rabbitmq_e2e"));
        pool.setUsername(pg.user());
        pool.setPassword(pg.password());
        pool.setMaximumPoolSize(8);
        try (HikariDataSource dataSource = new HikariDataSource(pool)) {
            run(Jdbi.create(dataSource));
        }
    }

    private static void run(Jdbi jdbi) throws Exception {
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        String queue = Rabbit.declareQueue("e2e-orders");

        Set<String> expected = new HashSet<>();
        for (int tx = 0; tx < MESSAGES / 1000; tx++) {
            List<Message> batch = new ArrayList<>(1000);
            for (int i = 0; i < 1000; i++) {
                String id = "order-" + tx + "-" + i;
                expected.add(id);
                batch.add(
                        Message.builder()
                                .id(id)
                                .topic(queue)
                                .module("orders")
                                .contentType("application/json")
                                .payload("{\"id\":\"" + id + "\"}")
                                .build());
            }
            jdbi.useTransaction(h -> store.enqueueAll(h, batch));
        }

        Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
        Set<String> corrupted = ConcurrentHashMap.newKeySet();
        CountDownLatch allDistinct = new CountDownLatch(MESSAGES);
        Channel consumer = Rabbit.admin().createChannel();
        consumer.basicQos(2000);
        consumer.basicConsume(
                queue,
                true,
                new DefaultConsumer(consumer) {
                    @Override
                    public void handleDelivery(
                            String tag,
                            Envelope envelope,
                            AMQP.BasicProperties props,
                            byte[] body) {
                        String id = props.getMessageId();
                        if (!new String(body, StandardCharsets.UTF_8)
                                        .equals("{\"id\":\"" + id + "\"}")
                                || !id.equals(
                                        String.valueOf(props.getHeaders().get(OutboxHeaders.ID)))) {
                            corrupted.add(id);
                        }
                        if (received.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet()
                                == 1) {
                            allDistinct.countDown();
                        }
                    }
                });

        // 8 publisher calls of 125 messages per claimed batch: each call pipelines its messages on
        // one channel.
        boolean complete;
        try (RabbitMqPublisher publisher =
                        Rabbit.publisherBuilder().connectionName("outbox4j-e2e").build();
                Relay relay =
                        Relay.builder(store, publisher)
                                .owner("e2e-relay")
                                .batchSize(1000)
                                .workers(8)
                                .deliveryTimeout(Duration.ofSeconds(10))
                                .pollInterval(Duration.ofMillis(50))
                                .build()) {
            relay.start();
            complete = allDistinct.await(120, TimeUnit.SECONDS);
        } finally {
            consumer.close();
        }
        assertThat(complete)
                .as("all %s messages consumed within 120 s (got %s)", MESSAGES, received.size())
                .isTrue();
        assertThat(received.keySet()).isEqualTo(expected);
        assertThat(corrupted)
                .as("messages whose payload or id header did not match their message-id")
                .isEmpty();
        long left =
                jdbi.withHandle(
                        h ->
                                h.createQuery("SELECT count(*) FROM outbox_message")
                                        .mapTo(Long.class)
                                        .one());
        assertThat(left)
                .as("every message completed (deleted) in the outbox, none dead-lettered")
                .isZero();
    }
}
