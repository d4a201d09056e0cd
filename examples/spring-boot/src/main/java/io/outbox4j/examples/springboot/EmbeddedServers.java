package io.outbox4j.examples.springboot;

import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Supplies the servers the example needs when none is configured, so it runs from a fresh clone:
 *
 * <ul>
 *   <li>no {@code outbox4j.publisher.kafka.bootstrap-servers}: an in-process single-node Kafka
 *       broker (outbox4j's test services), stopped with the application;
 *   <li>{@code example.database=postgres} and no {@code spring.datasource.url}: a PostgreSQL server
 *       (from {@code OUTBOX4J_POSTGRES_URL}, Docker, or the local installation on a free port);
 *   <li>otherwise the {@code spring.datasource.*} the application is given, H2 in memory by
 *       default.
 * </ul>
 */
final class EmbeddedServers
        implements ApplicationContextInitializer<ConfigurableApplicationContext> {
    static final String KAFKA = "outbox4j.publisher.kafka.bootstrap-servers";
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedServers.class);

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        ConfigurableEnvironment env = context.getEnvironment();
        Map<String, Object> supplied = new LinkedHashMap<>();
        if (isBlank(env.getProperty(KAFKA))) {
            KafkaServer kafka = KafkaServer.startEmbedded();
            LOG.info("started an embedded Kafka broker at {}", kafka.bootstrapServers());
            supplied.put(KAFKA, kafka.bootstrapServers());
            // Registered first, destroyed last: after the relay has drained and the consumer
            // stopped.
            ((DefaultSingletonBeanRegistry) context.getBeanFactory())
                    .registerDisposableBean("embeddedKafka", kafka::close);
        }
        if ("postgres".equalsIgnoreCase(env.getProperty("example.database", "h2"))
                && isBlank(env.getProperty("spring.datasource.url"))) {
            PostgresServer pg = PostgresServer.shared();
            String url = pg.createDatabase("outbox4j_example");
            LOG.info("using PostgreSQL {}", pg);
            supplied.put("spring.datasource.url", url);
            supplied.put("spring.datasource.username", pg.user());
            supplied.put("spring.datasource.password", pg.password());
        }
        if (!supplied.isEmpty()) {
            env.getPropertySources().addFirst(new MapPropertySource("example-servers", supplied));
        }
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
