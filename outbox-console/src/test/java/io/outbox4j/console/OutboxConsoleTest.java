package io.outbox4j.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.console.OutboxConsole.Request;
import io.outbox4j.console.OutboxConsole.Response;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The console's pages and actions over the reference in-memory store. */
class OutboxConsoleTest {
    private static final String EVIL = "<script>alert(1)</script>";
    private static final String AUTH =
            "Basic "
                    + Base64.getEncoder()
                            .encodeToString(
                                    "operator:s3cret-pass".getBytes(StandardCharsets.UTF_8));

    private final InMemoryOutboxStore store = new InMemoryOutboxStore();

    private OutboxConsole writable() {
        return OutboxConsole.builder(store)
                .basicAuthentication("operator", "s3cret-pass")
                .writeEnabled(true)
                .payloadsEnabled(true)
                .build();
    }

    /** Enqueues one message and dead-letters it at once; returns its id. */
    private String dead(String topic, String key, String reason) {
        Message m =
                Message.builder()
                        .id(java.util.UUID.randomUUID().toString())
                        .module("test")
                        .topic(topic)
                        .key(key)
                        .payload("{\"secret\":\"payload-value\"}")
                        .header("trace", "header-value")
                        .build();
        store.enqueueCommitted(List.of(m));
        List<Delivery> claimed =
                store.claim(new ClaimRequest("test", Instant.now(), Duration.ofMinutes(1), 100));
        for (Delivery d : claimed) {
            store.deadLetter(new DeadLetter("test", d.receipt(), reason, Instant.now()));
        }
        return m.id();
    }

    private static Request get(String path, Map<String, List<String>> query, boolean auth) {
        Map<String, String> headers = new HashMap<>();
        if (auth) {
            headers.put("Authorization", AUTH);
        }
        return new Request("GET", "/console", path, query, Map.of(), headers, Optional.empty());
    }

    private static Request post(
            String path, Map<String, List<String>> form, Map<String, String> h) {
        Map<String, String> headers = new HashMap<>(h);
        headers.putIfAbsent("Authorization", AUTH);
        headers.put("Host", "localhost:8080");
        return new Request("POST", "/console", path, Map.of(), form, headers, Optional.empty());
    }

    /** The dead-letter list of a console under host authentication, as {@code user} sees it. */
    private static Request hostList(Optional<String> user) {
        return new Request("GET", "/c", "/dead-letters", Map.of(), Map.of(), Map.of(), user);
    }

    /** A POST to {@code /apply} under host authentication, by {@code user} (empty: anonymous). */
    private static Request hostApply(Map<String, List<String>> form, Optional<String> user) {
        return new Request("POST", "/c", "/apply", Map.of(), form, Map.of(), user);
    }

    private static String csrf(String html) {
        Matcher m = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(html);
        assertThat(m.find()).as("a csrf field in %s", html).isTrue();
        return m.group(1);
    }

    @Test
    void theOverviewShowsTheBacklogPerTopicWithTopicsEscaped() {
        dead(EVIL, "k1", "broker said <b>no</b>");
        store.enqueueCommitted(
                List.of(
                        Message.builder()
                                .id("m-orders")
                                .module("test")
                                .topic("orders")
                                .payload("x")
                                .build()));

        Response r = writable().handle(get("/", Map.of(), true));

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.headers().get("Content-Security-Policy")).contains("default-src 'none'");
        assertThat(r.text())
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                .doesNotContain(EVIL)
                .contains("orders")
                .contains("id=\"blocked-keys\">1<")
                .contains("id=\"blocked\"")
                .contains(">k1<");
    }

    @Test
    void deadLettersAreListedWithReasonAttemptsAndKey_escaped_andPayloadsHidden() {
        dead(EVIL, "key<1>", "broker said <b>no</b>");

        String html = writable().handle(get("/dead-letters", Map.of(), true)).text();

        assertThat(html)
                .contains("key&lt;1&gt;")
                .contains("broker said &lt;b&gt;no&lt;/b&gt;")
                .doesNotContain("<b>no</b>")
                .doesNotContain("payload-value")
                .doesNotContain("header-value");
    }

    @Test
    void replayOfSelectedNeedsAConfirmationAndUnblocksTheKey() {
        String id = dead("orders", "k1", "refused");
        OutboxConsole console = writable();
        String list = console.handle(get("/dead-letters", Map.of(), true)).text();
        String token = csrf(list);

        Map<String, List<String>> form = new LinkedHashMap<>();
        form.put("csrf", List.of(token));
        form.put("op", List.of("replay-selected"));
        form.put("id", List.of(id));
        Response confirm = console.handle(post("/confirm", form, Map.of()));
        assertThat(confirm.status()).isEqualTo(200);
        assertThat(confirm.text()).contains("id=\"confirmation\"").contains(id);
        assertThat(store.deadLetters(io.outbox4j.api.DeadLetterQuery.all()).items())
                .hasSize(1); // nothing happened yet

        form.put("confirmed", List.of("yes"));
        Response done = console.handle(post("/apply", form, Map.of()));
        assertThat(done.status()).isEqualTo(303);
        assertThat(done.headers().get("Location")).contains("done=replay").contains("count=1");
        assertThat(store.deadLetters(io.outbox4j.api.DeadLetterQuery.all()).items()).isEmpty();
        assertThat(store.statistics(Instant.now()).blockedKeys()).isZero();
    }

    @Test
    void discardByFilterTakesOnlyTheFilteredTopic() {
        dead("a", "k1", "x");
        dead("b", "k2", "y");
        OutboxConsole console = writable();
        String token = csrf(console.handle(get("/dead-letters", Map.of(), true)).text());
        Map<String, List<String>> form = new LinkedHashMap<>();
        form.put("csrf", List.of(token));
        form.put("op", List.of("discard-filter"));
        form.put("topic", List.of("a"));
        assertThat(console.handle(post("/confirm", form, Map.of())).text())
                .contains("id=\"count\">1<");
        form.put("confirmed", List.of("yes"));
        assertThat(console.handle(post("/apply", form, Map.of())).status()).isEqualTo(303);
        assertThat(store.deadLetters(io.outbox4j.api.DeadLetterQuery.all()).items())
                .extracting(d -> d.message().topic())
                .containsExactly("b");
    }

    @Test
    void writesAreRefusedWithoutCredentials_withoutToken_fromAnotherOrigin_orWhenDisabled() {
        String id = dead("orders", "k1", "refused");
        OutboxConsole console = writable();
        String token = csrf(console.handle(get("/dead-letters", Map.of(), true)).text());
        Map<String, List<String>> form = new LinkedHashMap<>();
        form.put("csrf", List.of(token));
        form.put("op", List.of("replay-selected"));
        form.put("id", List.of(id));
        form.put("confirmed", List.of("yes"));

        Response anonymous =
                console.handle(post("/apply", form, Map.of("Authorization", "Basic bm9wZTpub3Bl")));
        assertThat(anonymous.status()).isEqualTo(403);
        assertThat(anonymous.headers()).doesNotContainKey("WWW-Authenticate");
        assertThat(anonymous.text()).contains("need the console's user and password");

        Map<String, List<String>> noToken = new LinkedHashMap<>(form);
        noToken.put("csrf", List.of("forged"));
        assertThat(console.handle(post("/apply", noToken, Map.of())).status()).isEqualTo(403);

        assertThat(
                        console.handle(
                                        post(
                                                "/apply",
                                                form,
                                                Map.of("Origin", "https://evil.example")))
                                .status())
                .isEqualTo(403);
        assertThat(
                        console.handle(post("/apply", form, Map.of("Sec-Fetch-Site", "cross-site")))
                                .status())
                .isEqualTo(403);

        OutboxConsole readOnly =
                OutboxConsole.builder(store).basicAuthentication("operator", "s3cret-pass").build();
        assertThat(readOnly.handle(post("/apply", form, Map.of())).status()).isEqualTo(403);
        assertThat(readOnly.handle(get("/dead-letters", Map.of(), true)).text())
                .doesNotContain("name=\"csrf\"");

        Request getApply = get("/apply", Map.of(), true);
        assertThat(console.handle(getApply).status()).isEqualTo(405);

        assertThat(store.deadLetters(io.outbox4j.api.DeadLetterQuery.all()).items()).hasSize(1);
    }

    @Test
    void hostAuthenticationWritesOnlyForANamedOperator() {
        String id = dead("orders", "k1", "refused");
        OutboxConsole console =
                OutboxConsole.builder(store).hostAuthentication().writeEnabled(true).build();
        Request anonymousList = hostList(Optional.empty());
        assertThat(console.handle(anonymousList).text()).doesNotContain("name=\"csrf\"");
        Request list = hostList(Optional.of("ann"));
        String token = csrf(console.handle(list).text());
        Map<String, List<String>> form = new LinkedHashMap<>();
        form.put("csrf", List.of(token));
        form.put("op", List.of("discard-selected"));
        form.put("id", List.of(id));
        form.put("confirmed", List.of("yes"));
        assertThat(console.handle(hostApply(form, Optional.empty())).status()).isEqualTo(401);
        assertThat(console.handle(hostApply(form, Optional.of("bob"))).status())
                .as("ann's token is not bob's")
                .isEqualTo(403);
        assertThat(console.handle(hostApply(form, Optional.of("ann"))).status()).isEqualTo(303);
    }

    @Test
    void writesOrPayloadsWithoutAnAuthenticationDoNotBuild() {
        assertThatThrownBy(() -> OutboxConsole.builder(store).writeEnabled(true).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("authentication");
        assertThatThrownBy(() -> OutboxConsole.builder(store).payloadsEnabled(true).build())
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> OutboxConsole.builder(store).basicAuthentication("a", "short"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void onePayloadIsShownOnlyWhenAskedAndAllowed() {
        dead("orders", "k1", "refused");
        OutboxConsole console = writable();
        String list = console.handle(get("/dead-letters", Map.of(), true)).text();
        Matcher m = Pattern.compile("href=\"(/console/message\\?[^\"]+)\"").matcher(list);
        assertThat(m.find()).isTrue();
        String href = m.group(1).replace("&amp;", "&");
        Map<String, List<String>> query =
                OutboxConsole.parameters(href.substring(href.indexOf('?') + 1));

        String detail = console.handle(get("/message", query, true)).text();
        assertThat(detail).contains("refused").contains("trace").doesNotContain("payload-value");

        Map<String, List<String>> withPayload = new LinkedHashMap<>(query);
        withPayload.put("payload", List.of("1"));
        assertThat(console.handle(get("/message", withPayload, true)).text())
                .contains("payload-value")
                .contains("header-value");

        OutboxConsole noPayloads =
                OutboxConsole.builder(store).basicAuthentication("operator", "s3cret-pass").build();
        assertThat(noPayloads.handle(get("/message", withPayload, true)).text())
                .doesNotContain("payload-value")
                .doesNotContain("header-value");
    }

    @Test
    void deadLettersArePagedAndFilteredByTime() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(dead("t", "k" + i, "r" + i));
        }
        OutboxConsole console = OutboxConsole.builder(store).pageSize(2).build();
        String first = console.handle(get("/dead-letters", Map.of(), false)).text();
        assertThat(first).contains(ids.get(0)).contains(ids.get(1)).doesNotContain(ids.get(2));
        Matcher next = Pattern.compile("id=\"next-page\" href=\"([^\"]+)\"").matcher(first);
        assertThat(next.find()).isTrue();
        String href = next.group(1).replace("&amp;", "&");
        String second =
                console.handle(
                                get(
                                        "/dead-letters",
                                        OutboxConsole.parameters(
                                                href.substring(href.indexOf('?') + 1)),
                                        false))
                        .text();
        assertThat(second).contains(ids.get(2)).contains(ids.get(3)).doesNotContain(ids.get(0));
        assertThat(
                        console.handle(
                                        get(
                                                "/dead-letters",
                                                Map.of("before", List.of("2000-01-01T00:00:00")),
                                                false))
                                .text())
                .contains("No dead letter matches the filter.");
        assertThat(
                        console.handle(
                                        get(
                                                "/dead-letters",
                                                Map.of("from", List.of("nonsense")),
                                                false))
                                .status())
                .isEqualTo(400);
        assertThat(console.handle(get("/nowhere", Map.of(), false)).status()).isEqualTo(404);
        assertThat(console.handle(get("", Map.of(), false)).headers().get("Location"))
                .isEqualTo("/console/");
    }

    @Test
    void basicAuthenticationGuardsEveryPage() {
        Response r = writable().handle(get("/", Map.of(), false));
        assertThat(r.status()).isEqualTo(401);
        assertThat(writable().handle(get("/style.css", Map.of(), false)).status()).isEqualTo(401);
    }

    @Test
    void escapeCoversMarkupQuotesAndControlCharacters() {
        assertThat(Html.escape("<a href=\"x\" onclick='y'>&`\u0001"))
                .isEqualTo("&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;\uFFFD");
    }

    @Test
    void formAndQueryParametersAreDecodedKeepingRepeats() {
        assertThat(OutboxConsole.parameters("id=a&id=b%26c&topic=%3Cx%3E+y&&flag&bad=%zz"))
                .containsEntry("id", List.of("a", "b&c"))
                .containsEntry("topic", List.of("<x> y"))
                .containsEntry("flag", List.of(""))
                .containsEntry("bad", List.of("%zz"));
        assertThat(OutboxConsole.parameters(null)).isEmpty();
        assertThat(OutboxConsole.parameters("")).isEmpty();
    }
}
