package io.outbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.DatabaseServer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The command end to end on a real database: dead letters made by a real relay run whose publisher
 * refuses one topic for good, then stats, list, show, replay (published afterwards) and discard
 * through the command line, as an operator would type them. One tiny subclass per database.
 */
abstract class CliEndToEndTest {
    /** The database server the test runs on (started once per JVM). */
    abstract DatabaseServer server();

    String url;
    JdbiOutboxStore store;
    ShopOutbox.Broker broker;

    @BeforeEach
    void shopWithTwoDeadLettersFromARealRelayRun() {
        url = server().createDatabase("outbox_cli_e2e");
        Jdbi jdbi = Jdbi.create(url, server().user(), server().password());
        store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        jdbi.useTransaction(h -> store.enqueueAll(h, ShopOutbox.messages("")));
        broker = new ShopOutbox.Broker();
        assertThat(ShopOutbox.relayUntilIdle(store, broker)).isEqualTo(2);
        assertThat(broker.published).containsExactlyInAnyOrder("order-1", "order-2", "order-3");
    }

    /** Runs the command with the store named the way an operator would (password from the env). */
    CliRun cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--store", url, "--user", server().user()));
        return CliRun.of(all, Map.of("OUTBOX4J_STORE_PASSWORD", server().password()));
    }

    @Test
    void operatorSession_statsListShowReplayDiscard_onDeadLettersOfARealFailingPublish() {
        CliRun stats = cli("stats");
        assertThat(stats.exit()).as(stats.err()).isZero();
        assertThat(stats.out())
                .doesNotContain("shop.orders") // published and completed: gone from the outbox
                .containsPattern("(?m)^shop\\.payments +1 +0 +0 +2 +\\S+$")
                .containsPattern("(?m)^\\(all topics\\) +1 +0 +0 +2 +\\S+$");

        CliRun list = cli("dead-letters", "list");
        assertThat(list.exit()).isZero();
        assertThat(list.out())
                .containsPattern("(?m)^pay-1 +shop\\.payments +card-1 +1 ")
                .containsPattern("(?m)^pay-3 +shop\\.payments +card-3 +1 ")
                .doesNotContain("order-")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);

        CliRun show = cli("dead-letters", "show", "pay-1");
        assertThat(show.exit()).isZero();
        assertThat(show.out())
                .containsPattern("reason: +.*" + ShopOutbox.REFUSAL)
                .contains("headers:      tenant, trace-id (values hidden")
                .doesNotContain(ShopOutbox.SECRET_PAYLOAD)
                .doesNotContain(ShopOutbox.SECRET_HEADER_VALUE);
        assertThat(cli("dead-letters", "show", "pay-1", "--payload").out())
                .contains(ShopOutbox.SECRET_PAYLOAD);

        broker.refusePayments = false;
        CliRun replay = cli("dead-letters", "replay", "pay-1");
        assertThat(replay.exit()).isZero();
        assertThat(replay.out()).contains("Replayed 1 of 1 dead letter; due now.");
        ShopOutbox.relayUntilIdle(store, broker);
        assertThat(broker.published)
                .as("the replayed message, then the one that waited behind it on its key")
                .containsSubsequence("pay-1", "pay-2");

        CliRun discard = cli("dead-letters", "discard", "pay-3");
        assertThat(discard.exit()).isZero();
        assertThat(discard.out()).contains("Discarded 1 of 1 dead letter.");
        assertThat(cli("stats", "--json").out())
                .contains("\"total\":{\"ready\":0,\"delayed\":0,\"leased\":0,\"dead\":0,")
                .contains("\"blockedKeys\":0");
        assertThat(cli("dead-letters", "show", "pay-3").exit()).isEqualTo(OutboxCli.NOT_FOUND);
    }

    @Test
    void members_listsTheRelaysSharingTheOutboxAndTheirBuckets() {
        store.renew("relay-a", java.time.Duration.ofMinutes(5));
        store.renew("relay-b", java.time.Duration.ofMinutes(5));
        store.renew("relay-gone", java.time.Duration.ofMillis(100));
        java.util.Map<String, List<Integer>> shares =
                io.outbox4j.api.Buckets.assign(List.of("relay-a", "relay-b", "relay-gone"));
        await(
                () ->
                        store.members().stream()
                                .noneMatch(m -> m.id().equals("relay-gone") && m.live()));
        CliRun members = cli("members");
        assertThat(members.exit()).as(members.err()).isZero();
        int gone = shares.get("relay-gone").size();
        assertThat(members.out())
                .contains("3 members")
                .containsPattern("(?m)^relay-a +yes +" + shares.get("relay-a").size() + " ")
                .containsPattern("(?m)^relay-b +yes +" + shares.get("relay-b").size() + " ")
                .containsPattern("(?m)^relay-gone +no +" + gone + " ")
                .contains(gone + " of 256 buckets have no live owner");
        assertThat(cli("members", "--json").out())
                .contains("\"buckets\":256")
                .contains(
                        "{\"id\":\"relay-a\",\"live\":true,\"buckets\":"
                                + shares.get("relay-a").size()
                                + ",");
        assertThat(cli("stats").out())
                .contains("Relays (members): 2 live, 1 lapsed sharing 256 buckets");
        store.renew("relay-a", java.time.Duration.ofMinutes(5)); // drops relay-gone
        assertThat(cli("members").out())
                .contains("2 members")
                .contains("Every one of the 256 buckets has a live owner.");
        assertThat(cli("members", "extra").exit()).isEqualTo(OutboxCli.USAGE);
    }

    private static void await(java.util.function.BooleanSupplier condition) {
        Awaitility.await()
                .dontCatchUncaughtExceptions()
                .atMost(java.time.Duration.ofSeconds(10))
                .pollInterval(java.time.Duration.ofMillis(20))
                .until(condition::getAsBoolean);
    }

    @Test
    void listAndShowJson_pageThroughTheStoresOwnCursor() {
        CliRun first = cli("dead-letters", "list", "--limit", "1", "--json");
        assertThat(first.out()).contains("\"id\":\"pay-1\"").doesNotContain("pay-3");
        String cursor = first.out().replaceAll("(?s).*\"next\":\"([^\"]+)\".*", "$1");
        assertThat(cli("dead-letters", "list", "--limit", "1", "--after", cursor, "--json").out())
                .contains("\"id\":\"pay-3\"")
                .doesNotContain("pay-1")
                .contains("\"next\":null");
        assertThat(cli("dead-letters", "replay", "--all", "--topic", ShopOutbox.PAYMENTS).out())
                .contains("Replayed 2 dead letters");
    }

    @Test
    void badArguments_exit2_andLeaveTheOutboxAsItWas() {
        Instant at = Instant.now();
        OutboxStatistics before = store.statistics(at);
        for (String[] args :
                List.of(
                        new String[] {"dead-letters", "replay"},
                        new String[] {"dead-letters", "discard", "--topic", ShopOutbox.PAYMENTS},
                        new String[] {"dead-letters", "discard", "pay-1", "--all"},
                        new String[] {"dead-letters", "list", "--limit", "5000"},
                        new String[] {"dead-letters", "replay", "--all", "--dead-before", "soon"},
                        new String[] {"stats", "--table", "outbox message"})) {
            CliRun r = cli(args);
            assertThat(r.exit())
                    .as(String.join(" ", args) + ": " + r.err())
                    .isEqualTo(OutboxCli.USAGE);
            assertThat(r.err()).startsWith("outbox4j: ");
        }
        assertThat(store.statistics(at).total()).isEqualTo(before.total());
        assertThat(cli("dead-letters", "list").out()).contains("pay-1").contains("pay-3");
    }

    @Test
    void aStoreThatCannotBeReached_exits1_namingItWithoutThePassword() {
        CliRun r =
                CliRun.of(
                        List.of(
                                "stats",
                                "--store",
                                url.replaceFirst("//[^/]+/", "//127.0.0.1:1/")
                                        + (url.contains("?") ? "&" : "?")
                                        + "password=hunter2"),
                        Map.of());
        assertThat(r.exit()).isEqualTo(OutboxCli.STORE_FAILED);
        assertThat(r.err())
                .contains("outbox4j: cannot connect to ")
                .contains("127.0.0.1:1")
                .contains("password=***")
                .doesNotContain("hunter2");
    }

    @Test
    void aTableThatDoesNotExist_exits1_withTheDatabasesMessage() {
        CliRun r = cli("stats", "--table", "no_such_outbox");
        assertThat(r.exit()).isEqualTo(OutboxCli.STORE_FAILED);
        assertThat(r.err())
                .startsWith("outbox4j: the store failed: ")
                .containsIgnoringCase("no_such_outbox");
    }
}
