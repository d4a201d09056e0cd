package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The console as the Spring Boot starter serves it: on the management port (its own, here), with
 * Spring Security authenticating the operator and its CSRF filter on, over a real PostgreSQL outbox
 * whose dead letter was made by a failing publish through the starter's relay; a replay from the
 * page, in a real browser (headless Chromium), publishes the message and unblocks its key.
 */
class OutboxConsoleBootTest {
    private static final String USER = "ops";
    private static final String PASSWORD = "ops-password";

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        RecordingPublisher publisher() {
            RecordingPublisher p = new RecordingPublisher();
            p.refuse(m -> m.key().orElse("").equals("order-1") && m.id().equals("o-1"));
            return p;
        }

        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            // Reading is open here, writing needs a user: the console decides, Spring Security
            // authenticates (HTTP Basic) and checks its own CSRF token.
            return http.authorizeHttpRequests(a -> a.anyRequest().permitAll())
                    .httpBasic(Customizer.withDefaults())
                    .build();
        }

        @Bean
        UserDetailsService users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername(USER).password("{noop}" + PASSWORD).roles("OPS").build());
        }
    }

    private static Message order(String id) {
        return Message.builder()
                .id(id)
                .topic("orders")
                .key("order-1")
                .module("orders")
                .contentType("application/json")
                .payload("{\"order\":\"" + id + "\"}")
                .build();
    }

    @Test
    void
            theManagementPortServesTheConsole_aReplayFromThePagePublishes_andAnonymousWritesAreRefused()
                    throws Exception {
        ChromeDriver browser = startBrowser();
        PostgresServer pg = PostgresServer.shared();
        String url = pg.createDatabase("outbox_console_boot");
        try (ConfigurableApplicationContext app =
                new SpringApplicationBuilder(App.class)
                        .properties(
                                "spring.main.banner-mode=off",
                                "server.port=0",
                                "server.address=127.0.0.1",
                                "management.server.port=0",
                                "management.server.address=127.0.0.1",
                                "spring.datasource.url=" + url,
                                "spring.datasource.username=" + pg.user(),
                                "spring.datasource.password=" + pg.password(),
                                "outbox4j.store.jdbc.create-schema=true",
                                "outbox4j.relay.poll-interval=100ms",
                                "outbox4j.console.enabled=true",
                                "outbox4j.console.write-enabled=true")
                        // over the test application.properties' none
                        .run("--spring.main.web-application-type=servlet")) {
            RecordingPublisher publisher = app.getBean(RecordingPublisher.class);
            OutboxAdmin admin = app.getBean(OutboxAdmin.class);
            TransactionTemplate tx = app.getBean(TransactionTemplate.class);
            TransactionalOutbox outbox = app.getBean(TransactionalOutbox.class);
            tx.executeWithoutResult(t -> outbox.enqueueAll(List.of(order("o-1"), order("o-2"))));
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> admin.deadLetters(DeadLetterQuery.all()).items().size() == 1);
            assertThat(publisher.publishedIds()).doesNotContain("o-2"); // blocked behind o-1

            String management = app.getEnvironment().getProperty("local.management.port");
            String server = app.getEnvironment().getProperty("local.server.port");
            String console = "http://127.0.0.1:" + management + "/actuator/outbox-console";
            HttpClient http = HttpClient.newHttpClient();

            // Only the management port serves it.
            assertThat(
                            http.send(
                                            HttpRequest.newBuilder(
                                                            URI.create(
                                                                    "http://127.0.0.1:"
                                                                            + server
                                                                            + "/actuator/outbox-console/"))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .statusCode())
                    .isEqualTo(404);
            // Anonymous: reads, no forms; a write is refused.
            HttpResponse<String> anonymous =
                    http.send(
                            HttpRequest.newBuilder(URI.create(console + "/dead-letters")).build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(200);
            assertThat(anonymous.body()).contains("o-1").doesNotContain("Replay selected");
            HttpResponse<String> write =
                    http.send(
                            HttpRequest.newBuilder(URI.create(console + "/apply"))
                                    .header("Content-Type", "application/x-www-form-urlencoded")
                                    .POST(
                                            HttpRequest.BodyPublishers.ofString(
                                                    "op=replay-filter&confirmed=yes"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(write.statusCode()).isEqualTo(403);
            assertThat(admin.deadLetters(DeadLetterQuery.all()).items()).hasSize(1);

            // The operator, in a browser: replay o-1 from the page, after its confirmation.
            publisher.refuse(m -> false);
            credentials(browser);
            browser.get(console + "/");
            assertThat(browser.findElement(By.id("topics")).getText()).contains("orders");
            assertThat(browser.findElement(By.id("blocked-keys")).getText()).isEqualTo("1");
            browser.get(console + "/dead-letters");
            browser.findElement(By.cssSelector("input[type=checkbox][value='o-1']")).click();
            browser.findElement(By.cssSelector("button[value='replay-selected']")).click();
            assertThat(browser.findElement(By.id("confirmation")).getText()).contains("o-1");
            browser.findElement(By.id("confirm")).click();
            assertThat(browser.findElement(By.id("notice")).getText())
                    .isEqualTo("Replayed 1 dead letter(s).");
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> publisher.publishedIds().containsAll(List.of("o-1", "o-2")));
            assertThat(publisher.publishedIds().indexOf("o-1"))
                    .isLessThan(publisher.publishedIds().indexOf("o-2"));
            assertThat(admin.deadLetters(DeadLetterQuery.all()).items()).isEmpty();
        } finally {
            browser.quit();
        }
    }

    @Test
    void writesOrPayloadsWithoutSpringSecurity_stopTheStart() {
        ConsoleProperties write = new ConsoleProperties();
        write.setWriteEnabled(true);
        assertThatThrownBy(
                        () ->
                                OutboxConsoleManagementConfiguration.console(
                                        new InMemoryOutboxStore(), null, write, false, "t"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("outbox4j.console.write-enabled=true needs Spring Security");
        ConsoleProperties payloads = new ConsoleProperties();
        payloads.setPayloadsEnabled(true);
        assertThatThrownBy(
                        () ->
                                OutboxConsoleManagementConfiguration.console(
                                        new InMemoryOutboxStore(), null, payloads, false, "t"))
                .hasMessageContaining(
                        "outbox4j.console.payloads-enabled=true needs Spring Security");
        assertThat(
                        OutboxConsoleManagementConfiguration.console(
                                        new InMemoryOutboxStore(),
                                        null,
                                        new ConsoleProperties(),
                                        false,
                                        "t")
                                .writeEnabled())
                .isFalse();
    }

    // ---------------------------------------------------------------------------------------------

    private static ChromeDriver startBrowser() {
        String chromium = "/usr/bin/chromium";
        String driver = "/usr/bin/chromedriver";
        if (!new File(chromium).canExecute() || !new File(driver).canExecute()) {
            String why =
                    "the console's browser test needs "
                            + chromium
                            + " and "
                            + driver
                            + " (apt-get install chromium chromium-driver)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why + "; under CI=true it must run");
            }
            Assumptions.abort(why);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        options.addArguments(
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu");
        ChromeDriverService service =
                new ChromeDriverService.Builder()
                        .usingDriverExecutable(new File(driver))
                        .usingAnyFreePort()
                        .build();
        return new ChromeDriver(service, options);
    }

    private static void credentials(ChromeDriver browser) {
        browser.executeCdpCommand("Network.enable", Map.of());
        String basic =
                Base64.getEncoder()
                        .encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
        browser.executeCdpCommand(
                "Network.setExtraHTTPHeaders",
                Map.of("headers", Map.of("Authorization", "Basic " + basic)));
    }
}
