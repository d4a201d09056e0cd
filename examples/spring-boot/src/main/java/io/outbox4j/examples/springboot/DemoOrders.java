package io.outbox4j.examples.springboot;

import java.math.BigDecimal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Places {@code example.demo-orders} orders at startup (3 by default), so a plain run shows the
 * whole flow in the log: order committed, event published by the relay, event received from Kafka.
 */
@Component
class DemoOrders implements ApplicationRunner {
    private static final Logger LOG = LoggerFactory.getLogger("orders.demo");

    private final OrderService orders;
    private final int count;

    private final Environment environment;

    DemoOrders(
            OrderService orders,
            @Value("${example.demo-orders:3}") int count,
            Environment environment) {
        this.orders = orders;
        this.count = count;
        this.environment = environment;
    }

    @Override
    public void run(ApplicationArguments args) {
        for (int i = 1; i <= count; i++) {
            String id = orders.place("customer-" + (i % 2 + 1), BigDecimal.valueOf(10L * i));
            LOG.info("placed order {} (order row and event committed together)", id);
        }
        if (count > 0) {
            LOG.info(
                    "try: curl -s -XPOST localhost:{}/orders -H 'content-type: application/json'"
                            + " -d '{\"customer\":\"c-1\",\"amount\":12.5}'",
                    environment.getProperty("local.server.port", "8080"));
        }
    }
}
