package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.Publisher;
import io.outbox4j.store.mongo.MongoOutboxStore;
import io.outbox4j.testservices.MongoServer;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Without a DataSource the store is a collection reached through the application's MongoClient
 * (mongo-java-server or OUTBOX4J_MONGODB_URI). Enqueue in a Spring-managed MongoDB transaction is
 * not offered (no TransactionalOutbox): the store's {@code Outbox<ClientSession>} is the way in.
 */
class OutboxMongoAutoConfigurationTest {
    private final ApplicationContextRunner runner =
            new ApplicationContextRunner()
                    .withConfiguration(
                            AutoConfigurations.of(
                                    OutboxAutoConfiguration.class,
                                    OutboxRelayAutoConfiguration.class))
                    .withBean(
                            MongoClient.class,
                            () -> MongoClients.create(MongoServer.shared().connectionString()))
                    .withBean(Publisher.class, RecordingPublisher::new);

    @Test
    @DisplayName(
            "a MongoClient and no DataSource give a MongoDB store, its indexes and a running relay")
    void storeFromTheMongoClient() {
        runner.withPropertyValues(
                        "outbox4j.store.mongodb.database=spring_boot_test",
                        "outbox4j.store.mongodb.create-indexes=true")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).hasSingleBean(MongoOutboxStore.class);
                            assertThat(context).doesNotHaveBean(TransactionalOutbox.class);
                            assertThat(context.getBean(RelayLifecycle.class).isRunning()).isTrue();
                            assertThat(
                                            context.getBean(OutboxAdmin.class)
                                                    .statistics(Instant.now())
                                                    .total()
                                                    .ready())
                                    .isZero();
                        });
    }

    @Test
    @DisplayName(
            "the MongoDB store without a database name stops the start naming outbox4j.store.mongodb.database")
    void databaseIsRequired() {
        runner.run(
                context -> {
                    assertThat(context).hasFailed();
                    Throwable t = context.getStartupFailure();
                    while (t != null
                            && !(t instanceof InvalidConfigurationPropertyValueException)) {
                        t = t.getCause();
                    }
                    assertThat(t).isNotNull();
                    assertThat(((InvalidConfigurationPropertyValueException) t).getName())
                            .isEqualTo("outbox4j.store.mongodb.database");
                });
    }
}
