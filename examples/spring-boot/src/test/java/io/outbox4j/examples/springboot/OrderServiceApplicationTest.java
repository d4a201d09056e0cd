package io.outbox4j.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox4j.testservices.KafkaServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example as its run command starts it (H2, embedded Kafka) and against PostgreSQL: an order
 * placed over HTTP comes back from Kafka, a rejected one does not, and health reports the outbox.
 */
class OrderServiceApplicationTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    @DisplayName(
            "default run (H2, embedded Kafka): a placed order's event is read back from Kafka; a rejected order publishes nothing")
    void defaultRun() throws Exception {
        try (ConfigurableApplicationContext app =
                OrderServiceApplication.application()
                        .run("--server.port=0", "--example.demo-orders=0")) {
            placeAndReadBack(app);
        }
    }

    @Test
    @DisplayName(
            "with example.database=postgres (and a Kafka given by property) the same holds on PostgreSQL")
    void postgresRun() throws Exception {
        try (ConfigurableApplicationContext app =
                OrderServiceApplication.application()
                        .run(
                                "--server.port=0",
                                "--example.demo-orders=0",
                                "--example.database=postgres",
                                "--outbox4j.publisher.kafka.bootstrap-servers="
                                        + KafkaServer.shared().bootstrapServers())) {
            assertThat(app.getEnvironment().getProperty("spring.datasource.url"))
                    .startsWith("jdbc:postgresql:");
            placeAndReadBack(app);
        }
    }

    private void placeAndReadBack(ConfigurableApplicationContext app) throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        OrderEventsLog log = app.getBean(OrderEventsLog.class);

        HttpResponse<String> rejected = post(port, "{\"customer\":\"c-9\",\"amount\":-1}");
        assertThat(rejected.statusCode()).isEqualTo(400);

        HttpResponse<String> created = post(port, "{\"customer\":\"c-1\",\"amount\":12.5}");
        assertThat(created.statusCode()).isEqualTo(201);
        String id = created.body().replaceAll(".*\"id\"\\s*:\\s*\"([^\"]+)\".*", "$1");
        await().atMost(Duration.ofSeconds(30)).until(() -> log.received().containsKey(id));
        assertThat(log.received()).as("only the accepted order was published").hasSize(1);

        HttpResponse<String> health =
                http.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://localhost:" + port + "/actuator/health"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(health.body()).contains("\"outbox\"").contains("\"relay\":\"running\"");
    }

    private HttpResponse<String> post(int port, String json) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/orders"))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
