package io.outbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The commands against the reference store ({@link InMemoryOutboxStore}, the tck's): every output,
 * filter, exit code and argument check. The same commands run against real databases in {@link
 * CliEndToEndTest}.
 */
class OutboxCliTest {
    private InMemoryOutboxStore store;
    private ShopOutbox.Broker broker;

    @BeforeEach
    void shopWithTwoDeadLetters() {
        store = new InMemoryOutboxStore();
        store.enqueueCommitted(ShopOutbox.messages(""));
        broker = new ShopOutbox.Broker();
        assertThat(ShopOutbox.relayUntilIdle(store, broker)).isEqualTo(2);
    }

    private CliRun cli(String... args) {
        return CliRun.against(store, "in-memory", args);
    }

    private List<String> deadIds() {
        return store.deadLetters(DeadLetterQuery.all()).items().stream()
                .map(d -> d.message().id())
                .collect(Collectors.toList());
    }

    @Test
    void stats_tableCountsEachTopicAndTheTotal() {
        CliRun r = cli("stats");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .containsPattern("(?m)^TOPIC +READY +DELAYED +LEASED +DEAD +OLDEST READY$")
                .containsPattern("(?m)^shop\\.payments +1 +0 +0 +2 +\\S+$")
                .containsPattern("(?m)^\\(all topics\\) +1 +0 +0 +2 +\\S+$")
                .contains("Blocked keys: ");
    }

    @Test
    void stats_json_isOneObjectWithTotalsAndTopics() {
        CliRun r = cli("stats", "--json");
        assertThat(r.exit()).isZero();
        assertThat(r.out().strip())
                .startsWith("{\"at\":\"")
                .endsWith("}")
                .contains("\"total\":{\"ready\":1,\"delayed\":0,\"leased\":0,\"dead\":2,")
                .contains("\"shop.payments\":{\"ready\":1,\"delayed\":0,\"leased\":0,\"dead\":2,")
                .containsPattern("\"oldestReadyAge\":\"PT[0-9.HMS]+\"")
                .doesNotContain("\n");
    }

    @Test
    void list_showsIdTopicKeyAttemptsAndReason_neverPayloadOrHeaderValues() {
        CliRun r = cli("dead-letters", "list");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .containsPattern("(?m)^ID +TOPIC +KEY +ATTEMPTS +DEAD AT +REASON$")
                .containsPattern(
                        "(?m)^pay-1 +shop\\.payments +card-1 +1 +\\S+ +permanent failure:"
                                + " PermanentFailureException: payment gateway refused t…$")
                .containsPattern("(?m)^pay-3 +shop\\.payments +card-3 +1 ")
                .contains("2 dead letters.")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
    }

    @Test
    void list_json_hasItemsAndNoCursorOnTheLastPage() {
        CliRun r = cli("dead-letters", "list", "--json");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains(
                        "\"id\":\"pay-1\",\"topic\":\"shop.payments\",\"key\":\"card-1\",\"attempts\":1")
                .containsPattern("\"reason\":\"[^\"]*" + ShopOutbox.REFUSAL + "\"")
                .contains("\"next\":null")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
    }

    @Test
    void list_limitGivesOnePageAndTheCursorOfTheNext_allReadsEveryPage() {
        CliRun first = cli("dead-letters", "list", "--limit", "1");
        assertThat(first.exit()).isZero();
        assertThat(first.out()).contains("pay-1").doesNotContain("pay-3").contains("Next page:");
        String cursor = first.out().replaceAll("(?s).*--after '([^']+)'.*", "$1");
        CliRun second = cli("dead-letters", "list", "--limit", "1", "--after", cursor);
        assertThat(second.out()).contains("pay-3").doesNotContain("pay-1");

        CliRun all = cli("dead-letters", "list", "--limit", "1", "--all");
        assertThat(all.out()).contains("pay-1").contains("pay-3").doesNotContain("Next page");
    }

    @Test
    void list_filtersByTopicAndDeadLetterTime() {
        assertThat(cli("dead-letters", "list", "--topic", ShopOutbox.ORDERS).out())
                .contains("No dead letters match the filter.");
        assertThat(cli("dead-letters", "list", "--dead-before", "1h").out())
                .contains("No dead letters match the filter.");
        assertThat(cli("dead-letters", "list", "--dead-from", "1h").out())
                .contains("pay-1")
                .contains("pay-3");
    }

    @Test
    void show_printsReasonAttemptsTimesAndHeaderNames_hidesPayloadAndHeaderValues() {
        CliRun r = cli("dead-letters", "show", "pay-1");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains("id:           pay-1")
                .contains("topic:        shop.payments")
                .contains("key:          card-1")
                .contains("attempts:     1")
                .containsPattern("reason: +.*" + ShopOutbox.REFUSAL)
                .contains("headers:      tenant, trace-id (values hidden")
                .containsPattern("payload: +\\d+ bytes \\(hidden")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
    }

    @Test
    void show_printsThePayloadAndHeaderValuesOnlyWhenAskedTo() {
        assertThat(cli("dead-letters", "show", "pay-1", "--payload").out())
                .contains(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
        assertThat(cli("dead-letters", "show", "pay-1", "--header-values").out())
                .contains("tenant: " + ShopOutbox.SECRET_HEADER_VALUE)
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD);
        assertThat(cli("dead-letters", "show", "pay-1", "--json").out())
                .contains("\"headerNames\":[\"tenant\",\"trace-id\"]")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
    }

    @Test
    void show_ofAnIdThatIsNoDeadLetter_exits3() {
        CliRun r = cli("dead-letters", "show", "order-1");
        assertThat(r.exit()).isEqualTo(OutboxCli.NOT_FOUND);
        assertThat(r.err()).contains("no dead letter with id 'order-1'");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void replay_makesTheDeadLetterDue_theRelayPublishesItAndThenTheMessageBehindIt() {
        broker.refusePayments = false;
        CliRun r = cli("dead-letters", "replay", "pay-1");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("Replayed 1 of 1 dead letter; due now.");
        assertThat(deadIds()).containsExactly("pay-3");

        ShopOutbox.relayUntilIdle(store, broker);
        assertThat(broker.published).containsSubsequence("pay-1", "pay-2");
    }

    @Test
    void replay_ofIdsSomeOfWhichAreNoDeadLetters_replaysTheOthersAndExits3() {
        CliRun r = cli("dead-letters", "replay", "pay-1", "order-1", "nope");
        assertThat(r.exit()).isEqualTo(OutboxCli.NOT_FOUND);
        assertThat(r.out()).contains("Replayed 1 of 3 dead letters");
        assertThat(r.err()).contains("2 of the ids named no dead letter");
        assertThat(deadIds()).containsExactly("pay-3");
    }

    @Test
    void replayAll_replaysEveryDeadLetterTheFilterSelects() {
        assertThat(cli("dead-letters", "replay", "--all", "--topic", ShopOutbox.ORDERS).out())
                .contains("Replayed 0 dead letters");
        CliRun r = cli("dead-letters", "replay", "--all", "--topic", ShopOutbox.PAYMENTS, "--json");
        assertThat(r.out().strip()).isEqualTo("{\"replayed\":2}");
        assertThat(deadIds()).isEmpty();
    }

    @Test
    void discard_deletesTheDeadLetterForGood_andUnblocksItsKey() {
        CliRun r = cli("dead-letters", "discard", "pay-1");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("Discarded 1 of 1 dead letter.");
        assertThat(deadIds()).containsExactly("pay-3");

        broker.refusePayments = false;
        ShopOutbox.relayUntilIdle(store, broker);
        assertThat(broker.published).contains("pay-2").doesNotContain("pay-1");
        assertThat(store.lastError("pay-1")).isEmpty();
    }

    @Test
    void discardAll_withAnAgeFilter_discardsOnlyOlderDeadLetters() {
        assertThat(cli("dead-letters", "discard", "--all", "--dead-before", "1h").out())
                .contains("Discarded 0 dead letters.");
        assertThat(cli("dead-letters", "discard", "--all", "--dead-before", "0s").exit()).isZero();
        assertThat(deadIds()).isEmpty();
    }

    static Stream<Arguments> badCommandLines() {
        return Stream.of(
                Arguments.of(List.of(), "no command given"),
                Arguments.of(List.of("statz"), "unknown command 'statz'"),
                Arguments.of(List.of("stats", "extra"), "stats takes no operand"),
                Arguments.of(List.of("stats", "--topic", "x"), "--topic does not apply to 'stats'"),
                Arguments.of(List.of("stats", "--frobnicate"), "unknown option '--frobnicate'"),
                Arguments.of(List.of("dead-letters"), "needs a subcommand"),
                Arguments.of(List.of("dead-letters", "purge"), "unknown subcommand"),
                Arguments.of(List.of("dead-letters", "list", "--limit", "0"), "--limit must be"),
                Arguments.of(List.of("dead-letters", "list", "--limit", "ten"), "--limit must be"),
                Arguments.of(List.of("dead-letters", "list", "--limit"), "--limit needs a value"),
                Arguments.of(
                        List.of("dead-letters", "list", "--dead-before", "yesterday"),
                        "--dead-before must be an instant"),
                Arguments.of(
                        List.of("dead-letters", "list", "--dead-from", "1h", "--dead-before", "2h"),
                        "must be before --dead-before"),
                Arguments.of(List.of("dead-letters", "list", "--all", "--after", "x"), "not both"),
                Arguments.of(List.of("dead-letters", "show"), "exactly one message id"),
                Arguments.of(List.of("dead-letters", "show", "a", "b"), "exactly one message id"),
                Arguments.of(List.of("dead-letters", "replay"), "needs the message ids, or --all"),
                Arguments.of(List.of("dead-letters", "discard"), "needs the message ids, or --all"),
                Arguments.of(
                        List.of("dead-letters", "discard", "--topic", ShopOutbox.PAYMENTS),
                        "select dead letters only with --all"),
                Arguments.of(
                        List.of("dead-letters", "replay", "pay-1", "--all"),
                        "give message ids or --all, not both"),
                Arguments.of(
                        List.of("dead-letters", "discard", "pay-1", "--payload"),
                        "--payload does not apply"),
                Arguments.of(
                        List.of("dead-letters", "replay", " "), "message id must not be blank"),
                Arguments.of(List.of("stats", "--json=yes"), "--json takes no value"),
                Arguments.of(List.of("stats", "--topic", "a", "--topic", "b"), "given twice"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badCommandLines")
    @DisplayName(
            "a bad command line exits 2 with a message naming the problem, and changes nothing")
    void badCommandLine_exits2WithAClearMessage_andChangesNothing(
            List<String> args, String message) {
        OutboxStatistics before = store.statistics(Instant.EPOCH);
        List<DeadMessage> deadBefore = store.deadLetters(DeadLetterQuery.all()).items();

        CliRun r = cli(args.toArray(new String[0]));

        assertThat(r.exit()).isEqualTo(OutboxCli.USAGE);
        assertThat(r.err()).startsWith("outbox4j: ").contains(message).contains("--help");
        assertThat(r.out()).isEmpty();
        assertThat(store.statistics(Instant.EPOCH).total()).isEqualTo(before.total());
        assertThat(store.deadLetters(DeadLetterQuery.all()).items()).isEqualTo(deadBefore);
    }

    @Test
    void help_printsEveryCommandAndExitCode() {
        CliRun r = CliRun.of(List.of("--help"), Map.of());
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains("stats")
                .contains("dead-letters list")
                .contains("dead-letters show ID")
                .contains("dead-letters replay ID...")
                .contains("dead-letters discard ID...")
                .contains("--json")
                .contains("Exit codes: 0");
    }
}
