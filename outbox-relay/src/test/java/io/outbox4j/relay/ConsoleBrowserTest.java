package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.console.OutboxConsole;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The console as the standalone relay serves it, in a real browser (headless Chromium and
 * chromedriver from the OS packages, driven by Selenium), over a real PostgreSQL outbox whose dead
 * letters were made by real failing publishes through the engine's relay.
 *
 * <p>Under {@code CI=true} a missing Chromium fails the test; elsewhere it is skipped with the
 * reason. With {@code -Doutbox4j.console.screenshots=docs} the screenshots of the main pages are
 * copied to {@code docs/console-*.png}; they are always written to {@code
 * target/console-screenshots}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {
    static final String CHROMIUM = "/usr/bin/chromium";
    static final String CHROMEDRIVER = "/usr/bin/chromedriver";
    static final String EVIL = "<script>alert(1)</script>";
    static final String USER = "operator";
    static final String PASSWORD = "console-pass-1";

    private static JdbiOutboxStore store;
    private static Relay relay;
    private static HealthServer http;
    private static ChromeDriver browser;
    private static String base;

    /** Keys the broker refuses for good; the rest it takes. */
    private static final Set<String> refused = ConcurrentHashMap.newKeySet();

    private static final List<String> published = new CopyOnWriteArrayList<>();

    /** A broker that refuses the messages of some keys for good, and takes the others. */
    private static final Publisher BROKER =
            (messages, timeout) -> {
                List<PublishOutcome> outcomes = new ArrayList<>();
                for (Message m : messages) {
                    if (refused.contains(m.key().orElse(""))) {
                        outcomes.add(
                                PublishOutcome.failed(
                                        new PermanentFailureException(
                                                "broker refused <b>"
                                                        + m.key().orElse("")
                                                        + "</b>: record too large")));
                    } else {
                        published.add(m.id());
                        outcomes.add(PublishOutcome.published());
                    }
                }
                return outcomes;
            };

    @BeforeAll
    static void start() throws IOException {
        browser = startBrowser();
        PostgresServer pg = PostgresServer.shared();
        Jdbi jdbi = Jdbi.create(pg.createDatabase("console_browser"), pg.user(), pg.password());
        store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        relay =
                Relay.builder(store, BROKER)
                        .owner("relay-console-test")
                        .pollInterval(Duration.ofMillis(100))
                        .build();
        OutboxConsole console =
                OutboxConsole.builder(store)
                        .title("outbox4j relay")
                        .basicAuthentication(USER, PASSWORD)
                        .writeEnabled(true)
                        .payloadsEnabled(true)
                        .relays(() -> List.of(OutboxRelay.status(relay, "relay-console-test")))
                        .build();
        http =
                new HealthServer(
                        "127.0.0.1",
                        0,
                        Optional::empty,
                        Optional::empty,
                        () -> "",
                        Optional.of(new ConsoleHandler(console)));
        base = "http://127.0.0.1:" + http.port() + "/console";

        refused.add("order-1");
        refused.add("k-evil");
        List<Message> messages =
                List.of(
                        message("m-order-1-a", "orders", "order-1"),
                        message("m-order-1-b", "orders", "order-1"), // waits behind a
                        message("m-evil", EVIL, "k-evil"),
                        message("m-payment", "payments", "payment-7"));
        jdbi.useTransaction(h -> store.enqueueAll(h, messages));
        relay.start();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> dead().size() == 2 && published.contains("m-payment"));
        assertThat(published).doesNotContain("m-order-1-b");
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (http != null) {
            http.close();
        }
        if (relay != null) {
            relay.close();
        }
    }

    private static Message message(String id, String topic, String key) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .key(key)
                .module("console-browser-test")
                .payload("{\"card\":\"4111-secret\"}")
                .header("tenant", "acme-secret")
                .build();
    }

    private static List<DeadMessage> dead() {
        return store.deadLetters(DeadLetterQuery.all()).items();
    }

    /** Chromium from the OS, or a skip (a failure under CI). */
    static ChromeDriver startBrowser() {
        boolean present = new File(CHROMIUM).canExecute() && new File(CHROMEDRIVER).canExecute();
        if (!present) {
            String why =
                    "the browser tests need "
                            + CHROMIUM
                            + " and "
                            + CHROMEDRIVER
                            + " (apt-get install chromium chromium-driver)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why + "; under CI=true they must run");
            }
            Assumptions.abort(why);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-dev-shm-usage",
                "--window-size=1280,900",
                "--disable-gpu");
        ChromeDriverService service =
                new ChromeDriverService.Builder()
                        .usingDriverExecutable(new File(CHROMEDRIVER))
                        .usingAnyFreePort()
                        .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
        return driver;
    }

    /** Sends (or stops sending) the operator's Basic credentials with every request. */
    static void credentials(ChromeDriver driver, boolean send, String user, String password) {
        driver.executeCdpCommand("Network.enable", Map.of());
        Map<String, Object> headers =
                send
                        ? Map.of(
                                "Authorization",
                                "Basic "
                                        + Base64.getEncoder()
                                                .encodeToString(
                                                        (user + ":" + password)
                                                                .getBytes(StandardCharsets.UTF_8)))
                        : Map.of();
        driver.executeCdpCommand("Network.setExtraHTTPHeaders", Map.of("headers", headers));
    }

    static void screenshot(ChromeDriver driver, String name) throws IOException {
        Path dir = Files.createDirectories(Path.of("target", "console-screenshots"));
        Path shot = dir.resolve("console-" + name + ".png");
        Files.write(shot, driver.getScreenshotAs(OutputType.BYTES));
        if ("docs".equals(System.getProperty("outbox4j.console.screenshots"))) {
            Files.copy(
                    shot,
                    Path.of("..", "docs", "console-" + name + ".png"),
                    StandardCopyOption.REPLACE_EXISTING);
        }
    }

    static void assertNoAlert(ChromeDriver driver) {
        try {
            driver.switchTo().alert();
            throw new AssertionError("a script ran: an alert is open");
        } catch (NoAlertPresentException expected) {
            // no script ran
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Test
    @Order(1)
    void theOverviewAndTheDeadLettersLoad_withTopicsRelaysMembersAndReasons() throws IOException {
        credentials(browser, true, USER, PASSWORD);
        browser.get(base + "/");
        assertThat(browser.getTitle()).contains("Overview");
        String topics = browser.findElement(By.id("topics")).getText();
        assertThat(topics).contains("orders").contains(EVIL); // payments: published, gone
        assertThat(browser.findElement(By.id("blocked-keys")).getText()).isEqualTo("2");
        assertThat(browser.findElement(By.id("blocked")).getText())
                .contains("order-1")
                .contains("k-evil")
                .contains("m-order-1-a");
        assertThat(browser.findElement(By.id("relays")).getText())
                .contains("relay-console-test")
                .contains("RUNNING");
        assertThat(browser.findElement(By.id("members")).getText())
                .contains("relay-console-test")
                .contains("256");
        screenshot(browser, "overview");

        browser.findElement(By.linkText("Dead letters")).click();
        String table = browser.findElement(By.id("dead-letters")).getText();
        assertThat(table)
                .contains("m-order-1-a")
                .contains("order-1")
                .contains("m-evil")
                .contains("broker refused <b>order-1</b>: record too large")
                .doesNotContain("4111-secret")
                .doesNotContain("acme-secret");
        assertThat(browser.getPageSource()).doesNotContain("4111-secret");
        screenshot(browser, "dead-letters");

        browser.findElement(By.linkText("m-order-1-a")).click();
        assertThat(browser.findElement(By.id("message")).getText())
                .contains("Attempts")
                .contains("record too large")
                .doesNotContain("4111-secret");
        screenshot(browser, "message");
        browser.findElement(By.linkText("Show payload and header values")).click();
        assertThat(browser.findElement(By.id("payload")).getText()).contains("4111-secret");
        assertThat(browser.findElement(By.id("headers")).getText()).contains("acme-secret");
    }

    @Test
    @Order(2)
    void aTopicNamedLikeAScriptRendersAsText() {
        credentials(browser, true, USER, PASSWORD);
        browser.get(base + "/");
        assertNoAlert(browser);
        WebElement cell =
                browser.findElement(By.xpath("//table[@id='topics']//td[text()='" + EVIL + "']"));
        assertThat(cell.isDisplayed()).isTrue();
        assertThat(browser.findElements(By.xpath("//script"))).isEmpty();

        browser.get(
                base
                        + "/dead-letters?topic="
                        + java.net.URLEncoder.encode(EVIL, StandardCharsets.UTF_8));
        assertNoAlert(browser);
        assertThat(browser.findElement(By.id("dead-letters")).getText()).contains(EVIL);
        assertThat(browser.findElement(By.name("topic")).getAttribute("value")).isEqualTo(EVIL);
        assertThat(browser.findElements(By.xpath("//script"))).isEmpty();
    }

    @Test
    @Order(3)
    void aReplayFromThePage_afterItsConfirmation_publishesTheMessageAndUnblocksItsKey()
            throws IOException {
        credentials(browser, true, USER, PASSWORD);
        refused.remove("order-1"); // the broker takes it now
        browser.get(base + "/dead-letters?topic=orders");
        browser.findElement(By.cssSelector("input[type=checkbox][value='m-order-1-a']")).click();
        browser.findElement(By.cssSelector("button[value='replay-selected']")).click();

        WebElement confirmation = browser.findElement(By.id("confirmation"));
        assertThat(confirmation.getText())
                .contains("Replay 1 selected dead letter(s)")
                .contains("m-order-1-a");
        assertThat(dead()).extracting(d -> d.message().id()).contains("m-order-1-a"); // not yet
        screenshot(browser, "confirm");
        browser.findElement(By.id("confirm")).click();

        assertThat(browser.findElement(By.id("notice")).getText())
                .isEqualTo("Replayed 1 dead letter(s).");
        await().atMost(Duration.ofSeconds(15))
                .until(
                        () ->
                                published.contains("m-order-1-a")
                                        && published.contains("m-order-1-b"));
        assertThat(published.indexOf("m-order-1-a")).isLessThan(published.indexOf("m-order-1-b"));
        assertThat(dead()).extracting(d -> d.message().id()).containsExactly("m-evil");
        assertThat(store.statistics(Instant.now()).blockedKeys()).isEqualTo(1); // k-evil only
        browser.get(base + "/");
        assertThat(browser.findElement(By.id("blocked-keys")).getText()).isEqualTo("1");
    }

    @Test
    @Order(4)
    void aWriteWithoutCredentialsIsRefused() throws Exception {
        credentials(browser, true, USER, PASSWORD);
        browser.get(base + "/dead-letters");
        // The form carries the operator's valid token: only the credentials will be missing.
        assertThat(browser.findElement(By.name("csrf")).getAttribute("value")).isNotBlank();
        credentials(browser, false, USER, PASSWORD);
        // The page's own form, posted as the browser would, but without the operator's credentials
        // (the page holds no script, and its policy forbids fetch: a form is the only way to
        // write).
        browser.executeScript(
                "const f = document.getElementById('dead-letter-actions');"
                        + "f.action = f.action.replace('/confirm', '/apply');"
                        + "for (const [n, v] of [['id', 'm-evil'], ['confirmed', 'yes'], ['op', 'discard-selected']]) {"
                        + "  const i = document.createElement('input');"
                        + "  i.type = 'hidden'; i.name = n; i.value = v; f.appendChild(i);"
                        + "}"
                        + "f.submit();");
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                browser.getPageSource()
                                        .contains("need the console's user and password"));

        HttpResponse<String> plain =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(base + "/apply"))
                                        .header("Content-Type", "application/x-www-form-urlencoded")
                                        .POST(
                                                HttpRequest.BodyPublishers.ofString(
                                                        "op=discard-filter&confirmed=yes"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(403);
        HttpResponse<String> page =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(base + "/dead-letters")).build(),
                                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(401);
        assertThat(page.headers().firstValue("WWW-Authenticate"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));
        assertThat(dead()).extracting(d -> d.message().id()).containsExactly("m-evil");
    }
}
