package io.outbox4j.examples.springboot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small order service on outbox4j's Spring Boot starter: {@code POST /orders} writes the order
 * and its {@code OrderPlaced} event in one transaction ({@link OrderService}); the starter's relay
 * publishes the event to Kafka; {@link OrderEventsLog} reads the topic back and logs each event
 * with its commit-to-consume latency. Embedded H2 and an in-process Kafka broker unless configured
 * otherwise ({@link EmbeddedServers}).
 */
@SpringBootApplication
public class OrderServiceApplication {
    /**
     * Starts the service.
     *
     * @param args Spring Boot arguments, e.g. {@code --example.database=postgres}
     */
    public static void main(String[] args) {
        application().run(args);
    }

    /** The application with its embedded-server initializer (tests use it too). */
    static SpringApplication application() {
        SpringApplication app = new SpringApplication(OrderServiceApplication.class);
        app.addInitializers(new EmbeddedServers());
        return app;
    }
}
