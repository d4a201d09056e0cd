package io.outbox4j.faulttests;

import io.outbox4j.api.Buckets;
import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.MariaDbServer;
import io.outbox4j.testservices.PostgresServer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * Scale-out under faults (docs/scale-out.md): relays in child JVMs that are members of one outbox
 * (member lease 2 s, renewed every 667 ms; message lease 3 s), each claiming keyed messages only of
 * its buckets, while a {@link PacedWriter} keeps every key busy (a backlog, then 100 messages a
 * second: each of the 100 keys gets a message every second). Three drills:
 *
 * <ol>
 *   <li>four relay JVMs, a random one killed with SIGKILL, a replacement started after each kill,
 *       30 times ({@code -Doutbox4j.faults.scaleKills=N} for another count): the killed member's
 *       buckets must be taken over within member lease + one renewal + message lease + a margin;
 *   <li>one of three relay JVMs frozen with SIGSTOP for twice its member lease, then SIGCONT: the
 *       others must publish messages of its buckets while it is frozen, and its return must cause
 *       no inversion (duplicates are counted);
 *   <li>members joining every 2 s, one to four, while a backlog drains, then closed one by one with
 *       SIGTERM (graceful: the relay finishes its batches and leaves, its buckets move at once).
 * </ol>
 *
 * <p>A <b>bucket takeover</b> is measured per key: from the fault to the first publish, by another
 * relay, of a message of a key whose bucket the faulty member owned at the fault (read from {@code
 * <table>_buckets} right after it); per fault the first and the last such key. Only keys with
 * something to take over count: a message first published after the fault (after the exit, for a
 * closed relay). The broker's append time is the clock ({@link KafkaSink}).
 *
 * <p>Variants of drill 2 freeze the member inside its membership renewal, inside a claim holding
 * bucket locks, and (its process running) its database connections by a TCP proxy that stops
 * forwarding while it is inside such a claim. A last drill runs members whose clocks are 30 s ahead
 * and behind.
 */
class ScaleOutFaultsTest {
    static final Duration MEMBER_LEASE = Duration.ofSeconds(2);
    static final RelaySettings SETTINGS = RelaySettings.drill().withMemberLease(MEMBER_LEASE);
    static final int KEYS = 100;
    static final int RATE = 100;

    /** How long a member may take from its JVM's start until it owns buckets. */
    static final Duration JOIN_TIMEOUT = Duration.ofSeconds(90);

    /**
     * What a bucket takeover after a crash may take beyond the store's bound (member lease + one
     * renewal interval + message lease = 5.67 s): the claim that follows the takeover (the poll
     * interval, 50 ms, or the end of the batch in flight), the publish (link latency 10 ms, the
     * broker's append), and above all scheduling on the 2 cores of CI, shared by four relay JVMs, a
     * fifth JVM starting (class loading and JIT, about 1.5 s of CPU), the Kafka broker and the
     * counting consumer in this JVM and PostgreSQL: a renewal thread or a claim loop can be a few
     * hundred ms late (the load average was 6 to 10 on the 2 cores while the margin was chosen). In
     * those runs the worst takeover after a kill was 4.4 s, well below the bound without the
     * margin.
     */
    static final Duration MARGIN = Duration.ofSeconds(2);

    /**
     * The longest the other relays may go without publishing anything while one is frozen: the
     * writer commits 10 messages every 100 ms and the others own at least two thirds of the keys at
     * all times, so in a healthy run they publish every few hundred ms (the longest gap in 9
     * healthy runs, at a load average of 6 to 12 on 2 cores, was 0.88 s; a publisher call that hits
     * the 1 s delivery timeout is retried after 200 ms).
     */
    static final Duration OTHERS_SILENT_AT_MOST = Duration.ofMillis(1500);

    /**
     * The same while the frozen member holds bucket locks inside a claim: a member's claim may
     * still hold locks of buckets that a renewal handed to another member moments before (the
     * freeze can land right after the joins), and a completion of the new owner that includes a
     * message of such a bucket waits for them. PostgreSQL ends the frozen transaction after 2 s
     * idle, which bounds that wait (seen once in CI: 2.0 s without a publish). Plus the margin
     * above.
     */
    static final Duration OTHERS_SILENT_WHILE_LOCKS_HELD_AT_MOST = Duration.ofMillis(3500);

    /** The clock skew of the skewed relays of the clock drill. */
    static final Duration SKEW = Duration.ofSeconds(30);

    static final Duration TAKEOVER_BOUND =
            MEMBER_LEASE.plus(MEMBER_LEASE.dividedBy(3)).plus(SETTINGS.lease()).plus(MARGIN);

    @Test
    void
            fourMemberJvms_aRandomOneKilledWithSigkillRepeatedly_replacedEachTime_itsBucketsAreTakenOverWithinTheBound_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        killDrill(
                "scale_out_kill_9",
                PostgresServer.shared(),
                Integer.getInteger("outbox4j.faults.scaleKills", 30));
    }

    /** The kill -9 drill on MariaDB (bucket locks are rows of {@code <table>_buckets} there). */
    @Test
    void
            onMariaDb_fourMemberJvms_aRandomOneKilledWithSigkillRepeatedly_itsBucketsAreTakenOverWithinTheBound_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        killDrill(
                "scale_out_kill_9_mariadb",
                MariaDbServer.shared(),
                Integer.getInteger("outbox4j.faults.scaleKillsMariaDb", 3));
    }

    private static void killDrill(String scenario, DatabaseServer server, int kills)
            throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int backlog = 1000;
        // the trickle is sized for 10 s per kill (a kill takes 4 to 6 s here); the rest of the
        // load is enqueued at once after the kills
        int messages = backlog + kills * 10 * RATE;
        List<Handover> handovers = new ArrayList<>();
        try (Drill d = new Drill(scenario, messages, KEYS, SETTINGS, server, KafkaSink::open);
                PacedWriter writer = new PacedWriter(d.db, d.load, backlog, RATE).start()) {
            List<ChildRelay> live = new ArrayList<>();
            int next = 1;
            for (int i = 0; i < 4; i++) {
                live.add(d.childRelay("relay-" + next++));
            }
            for (ChildRelay r : live) {
                awaitOwnsBuckets(d, r, JOIN_TIMEOUT);
            }
            int killedHoldingLeases = 0;
            int takenOverInTime = 0;
            for (int k = 1; k <= kills; k++) {
                ChildRelay victim = live.get(random.nextInt(live.size()));
                Thread.sleep(random.nextInt(500));
                victim.awaitHoldingLeases(Duration.ofSeconds(5));
                long killAt = victim.kill();
                Handover h = Handover.at(d, "kill-9", victim, killAt);
                live.remove(victim);
                ChildRelay replacement = d.childRelay("relay-" + next++);
                live.add(replacement);
                if (!h.leased.isEmpty()) {
                    killedHoldingLeases++;
                }
                h.figures.put("aliveMillis", killAt - victim.startedAtMillis());
                h.figures.put("replacement", replacement.name());
                handovers.add(h);
                // the next kill comes after this one's buckets were taken over (bounded wait: a
                // stall shows in the figures and fails the verdict, it does not hang the drill) and
                // the replacement joined (so the next kill reads settled owners)
                if (h.awaitTakenOver(d, writer, Duration.ofSeconds(30))) {
                    takenOverInTime++;
                }
                h.figures.put(
                        "replacementOwnsBucketsMillisAfterStart",
                        awaitOwnsBuckets(d, replacement, JOIN_TIMEOUT));
            }
            writer.finish();
            boolean drained = d.awaitDrained(Duration.ofMinutes(2));
            List<Integer> exits = new ArrayList<>();
            for (ChildRelay r : live) {
                exits.add(r.stop(Duration.ofSeconds(20)));
            }

            Map<String, Object> extra =
                    Drill.figures(
                            "from SIGKILL to the first publish by another relay of a message the killed"
                                    + " relay had leased");
            Handover.summarise(d, handovers, extra);
            extra.put("takeoverBoundMillis", TAKEOVER_BOUND.toMillis());
            extra.put("killsWhileHoldingLeases", killedHoldingLeases);
            extra.put("seed", seed);
            SoftAssertions soft = reportAndVerify(d, extra, exits, writer, drained);
            checkTakenOver(soft, d, handovers, "the kill; null: not all were", seed);
            soft.assertThat(takenOverInTime).as("kills taken over within 30 s").isEqualTo(kills);
            checkTrickle(soft, writer);
            soft.assertThat(killedHoldingLeases)
                    .as("kills that hit a relay holding leases")
                    .isGreaterThanOrEqualTo(kills / 2);
            soft.assertAll();
        }
    }

    @Test
    void
            oneOfThreeMemberJvmsFrozenWithSigstopForTwiceItsMemberLease_othersPublishItsBucketsMeanwhile_itsReturnInvertsNothing_losesNothing()
                    throws Exception {
        freezeDrill("scale_out_sigstop", Freeze.ANYWHERE);
    }

    /**
     * Drill 2 with the SIGSTOP landing while the member is inside its membership renewal (its
     * journal says {@code M+}, and PostgreSQL shows its renewal transaction idle): the renewal
     * holds the membership lock. It failed every time on the store-jdbi of commit 38ed18c, whose
     * renewal held the 256 rows of {@code <table>_buckets} that every other renewal waited for
     * (every member's lease ran out and no relay claimed a keyed message until SIGCONT; see the
     * README); since then the others extend their own leases without that lock.
     */
    @Test
    void
            oneOfThreeMemberJvmsFrozenWithSigstopInsideItsMembershipRenewal_othersKeepPublishingAndTakeItsBuckets_losesNothing()
                    throws Exception {
        freezeDrill("scale_out_sigstop_in_renewal", Freeze.IN_RENEWAL);
    }

    /**
     * Drill 2 with the SIGSTOP landing while the member is inside a claim transaction that holds
     * bucket locks (it parked rows: PostgreSQL shows it idle in transaction holding advisory
     * locks), which the server cuts off after 2 s idle. It failed every time on the store-jdbi of
     * commit 38ed18c (5 s cut-off, and a claim stopped at the first row it could not park: the
     * members that took its buckets over claimed nothing at all until SIGCONT; see the README).
     */
    @Test
    void
            oneOfThreeMemberJvmsFrozenWithSigstopInsideAClaimHoldingBucketLocks_othersKeepPublishingAndTakeItsBuckets_losesNothing()
                    throws Exception {
        freezeDrill("scale_out_sigstop_in_claim", Freeze.IN_CLAIM_HOLDING_BUCKET_LOCKS);
    }

    /**
     * Drill 2 with the relay's process running and its database connections frozen by a TCP proxy
     * that stops forwarding (a partition without a reset) while it is inside a claim holding bucket
     * locks: PostgreSQL ends that transaction after 2 s idle, the others take its buckets over when
     * its member lease runs out, and its connections recover when the proxy forwards again.
     */
    @Test
    void
            oneOfThreeMemberJvmsWithItsDatabaseConnectionsFrozenByAProxyInsideAClaimHoldingBucketLocks_othersKeepPublishingAndTakeItsBuckets_losesNothing()
                    throws Exception {
        freezeDrill(
                "scale_out_proxy_freeze_in_claim",
                Freeze.CONNECTIONS_IN_CLAIM_HOLDING_BUCKET_LOCKS);
    }

    /**
     * How often a freeze drill tries to land where it wants. A membership renewal is caught by
     * watching the child's journal; a claim holding bucket locks is short and rare (a member parks
     * only the rows deeper than the few it skips behind its own leases: 2 to 60+ random tries were
     * seen), so the drill widens it on the server instead, see {@link #slowParking}.
     */
    private static final int MAX_ATTEMPTS = 10;

    /**
     * How long the server holds the victim's statement that parks rows, its bucket locks already
     * taken ({@link #slowParking}).
     */
    private static final Duration PARK_DELAY = Duration.ofMillis(500);

    /** Where the SIGSTOP (or the proxy's freeze) of {@link #freezeDrill} lands. */
    private enum Freeze {
        /** At a random moment while the relay holds leases. */
        ANYWHERE,
        /** Inside a membership renewal transaction. */
        IN_RENEWAL,
        /** Inside a claim transaction holding bucket locks (advisory locks). */
        IN_CLAIM_HOLDING_BUCKET_LOCKS,
        /**
         * Not the process: its database connections, frozen by a TCP proxy that stops forwarding
         * while the relay is inside a claim transaction holding bucket locks. The relay's process,
         * publisher and broker keep running.
         */
        CONNECTIONS_IN_CLAIM_HOLDING_BUCKET_LOCKS
    }

    private static void freezeDrill(String scenario, Freeze where) throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        // a claim parks rows (and takes bucket locks) when keys have many messages waiting:
        // freezing one there needs a bigger backlog, reached early
        boolean viaProxy = where == Freeze.CONNECTIONS_IN_CLAIM_HOLDING_BUCKET_LOCKS;
        boolean inClaim = viaProxy || where == Freeze.IN_CLAIM_HOLDING_BUCKET_LOCKS;
        // Frozen inside a claim, its buckets are taken over only once PostgreSQL ended its idle
        // transaction (2 s) and its member lease ran out (2 s) and a renewal of another member
        // reassigned them: 4 s left no time to claim on a loaded machine (0 of 30 keys taken
        // over, seen once), so such a freeze lasts 6 s.
        Duration frozen = MEMBER_LEASE.multipliedBy(inClaim ? 3 : 2);
        Map<String, FreezingProxy> proxies = new HashMap<>();
        try (Drill d = open(scenario, inClaim ? 10_000 : 4000);
                PacedWriter writer =
                        new PacedWriter(d.db, d.load, inClaim ? 4000 : 1000, RATE).start()) {
            List<ChildRelay> relays = new ArrayList<>();
            for (String name : List.of("relay-a", "relay-b", "relay-c")) {
                if (viaProxy) { // each relay reaches the database through a proxy of its own
                    FreezingProxy proxy = FreezingProxy.before(d.db.jdbcUrl());
                    proxies.put(name, proxy);
                    relays.add(d.childRelay(name, SETTINGS, proxy.through(d.db.jdbcUrl())));
                } else {
                    relays.add(d.childRelay(name));
                }
            }
            for (ChildRelay r : relays) {
                awaitOwnsBuckets(d, r, JOIN_TIMEOUT);
            }
            if (!inClaim) {
                Drill.awaitPublished(d, 1000 + random.nextInt(300), Duration.ofSeconds(60));
            }
            ChildRelay victim = relays.get(random.nextInt(relays.size()));
            boolean holding = victim.awaitHoldingLeases(Duration.ofSeconds(5));
            long stoppedAt;
            int attempts = 0;
            List<String> frozenIn = List.of();
            if (inClaim) {
                slowParking(d);
            }
            while (true) {
                attempts++;
                if (where == Freeze.IN_RENEWAL) {
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (!victim.inRenewal() && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                } else if (inClaim) {
                    awaitParking(d, victim);
                }
                stoppedAt = viaProxy ? proxies.get(victim.name()).freeze() : victim.signal("STOP");
                // in a claim: past the end of the slowed statement, the transaction idle after it
                Thread.sleep(inClaim ? PARK_DELAY.toMillis() + 200 : 150);
                frozenIn = List.copyOf(idleTransactions(d).values());
                if (where == Freeze.ANYWHERE || frozenAsWanted(where, frozenIn)) {
                    // only what stays idle while it is frozen is its own: others move on
                    frozenIn = stillIdle(d);
                }
                if (where == Freeze.ANYWHERE
                        || frozenAsWanted(where, frozenIn)
                        || attempts == MAX_ATTEMPTS) {
                    break;
                }
                // it was not where it should be: again
                if (viaProxy) {
                    proxies.get(victim.name()).thaw();
                } else {
                    victim.signal("CONT");
                }
                Thread.sleep(100 + random.nextInt(100));
            }
            if (inClaim) {
                stopSlowParking(d);
            }
            long stopAt = stoppedAt;
            DbTimeline timeline = DbTimeline.start(d.db, stopAt, 250);
            Handover h = Handover.at(d, viaProxy ? "proxy-freeze" : "sigstop", victim, stopAt);
            Thread.sleep(Math.max(0, stopAt + frozen.toMillis() - System.currentTimeMillis()));
            long contAt = viaProxy ? proxies.get(victim.name()).thaw() : victim.signal("CONT");
            h.figures.put("stoppedAt", java.time.Instant.ofEpochMilli(stopAt).toString());
            h.figures.put("frozenMillis", contAt - stopAt);
            h.figures.put("transactionsIdleWhenFrozen", frozenIn);
            h.figures.put("frozenWhere", where.toString());
            h.figures.put("attemptsToFreezeThere", attempts);

            // after its return: it renews, owns buckets again and publishes again
            Long rejoinedMillis = null;
            long deadline = System.currentTimeMillis() + 15_000;
            while (System.currentTimeMillis() < deadline) {
                if (d.db.bucketOwners().containsValue(victim.name())) {
                    rejoinedMillis = System.currentTimeMillis() - contAt;
                    break;
                }
                Thread.sleep(10);
            }
            Long publishedAgainMillis = null;
            while (System.currentTimeMillis() < deadline) {
                OptionalLong again = d.ledger.firstPublishAt(contAt, null, victim.name()::equals);
                if (again.isPresent()) {
                    publishedAgainMillis = again.getAsLong() - contAt;
                    break;
                }
                Thread.sleep(20);
            }
            Thread.sleep(1000);
            timeline.close();
            writer.finish();
            boolean drained = d.awaitDrained(Duration.ofMinutes(2));
            List<Integer> exits = new ArrayList<>();
            for (ChildRelay r : relays) {
                exits.add(r.stop(Duration.ofSeconds(20)));
            }

            Map<String, Long> byKey = h.takeoverByKey(d);
            long keysBeforeCont =
                    byKey.values().stream().filter(t -> t != null && t < contAt - stopAt).count();
            int messagesBeforeCont =
                    d.ledger.countWithRecord(
                            h.seqsOfBuckets(d),
                            (at, by) -> at >= stopAt && at < contAt && !by.equals(victim.name()));
            // the longest time no other relay published anything while it was frozen (the writer
            // adds 15 messages every 100 ms, so the others are never idle for long)
            List<Long> others =
                    d.ledger.publishTimes(stopAt, contAt, by -> !by.equals(victim.name()));
            long longestSilence = 0;
            long previous = stopAt;
            for (long t : others) {
                longestSilence = Math.max(longestSilence, t - previous);
                previous = t;
            }
            longestSilence = Math.max(longestSilence, contAt - previous);
            h.figures.put("keysTakenOverWhileFrozen", keysBeforeCont);
            h.figures.put("messagesOfItsBucketsPublishedByOthersWhileFrozen", messagesBeforeCont);
            h.figures.put("publishedByOthersWhileFrozen", others.size());
            h.figures.put("longestSilenceOfOthersWhileFrozenMillis", longestSilence);
            List<Integer> perQuarter = new ArrayList<>();
            for (long t :
                    d.ledger.publishTimes(stopAt, contAt + 1000, by -> !by.equals(victim.name()))) {
                int i = (int) ((t - stopAt) / 250);
                while (perQuarter.size() <= i) {
                    perQuarter.add(0);
                }
                perQuarter.set(i, perQuarter.get(i) + 1);
            }
            h.figures.put("publishedByOthersPer250msFromStop", perQuarter);
            h.figures.put("rejoinedMillisAfterCont", rejoinedMillis);
            h.figures.put("publishedAgainMillisAfterCont", publishedAgainMillis);
            // window 3: messages it published after its return that another relay had published
            // while it was frozen
            int republished = 0;
            for (int seq : h.seqsOfBuckets(d)) {
                List<Integer> one = List.of(seq);
                if (d.ledger.countWithRecord(
                                        one, (at, by) -> at >= contAt && by.equals(victim.name()))
                                > 0
                        && d.ledger.countWithRecord(
                                        one,
                                        (at, by) ->
                                                at >= stopAt
                                                        && at < contAt
                                                        && !by.equals(victim.name()))
                                > 0) {
                    republished++;
                }
            }
            h.figures.put("publishedAgainAfterContThoughOthersHadWhileFrozen", republished);
            h.figures.put("timeline", timeline.samples());
            Map<String, Object> extra =
                    Drill.figures(
                            "from "
                                    + (viaProxy ? "the freeze of its connections" : "SIGSTOP")
                                    + " to the first publish by another relay of a message the frozen"
                                    + " relay had leased");
            Handover.summarise(d, List.of(h), extra);
            extra.put("frozenRelay", victim.name());
            extra.put("heldLeasesWhenFrozen", holding && !h.leased.isEmpty());
            extra.put("seed", seed);
            SoftAssertions soft = reportAndVerify(d, extra, exits, writer, drained);
            if (where != Freeze.ANYWHERE) {
                soft.assertThat(frozenAsWanted(where, frozenIn))
                        .as("the relay was frozen %s (idle transactions: %s)", where, frozenIn)
                        .isTrue();
            }
            soft.assertThat(messagesBeforeCont)
                    .as(
                            "messages of %s's buckets published by other relays while it was"
                                    + " frozen (%d of the %d keys of its buckets taken over; the"
                                    + " others published %d messages, at most %d ms apart;"
                                    + " transactions idle when it was frozen: %s; figures in %s;"
                                    + " seed %d)",
                            victim.name(),
                            keysBeforeCont,
                            h.eligible(d),
                            others.size(),
                            longestSilence,
                            frozenIn,
                            FaultFigures.file(),
                            seed)
                    .isPositive();
            soft.assertThat(longestSilence)
                    .as(
                            "the longest time (ms) no other relay published anything while %s was"
                                    + " frozen (the others must keep publishing; per 250 ms: %s;"
                                    + " transactions idle when it was frozen: %s; seed %d)",
                            victim.name(), perQuarter, frozenIn, seed)
                    .isLessThan(
                            (inClaim
                                            ? OTHERS_SILENT_WHILE_LOCKS_HELD_AT_MOST
                                            : OTHERS_SILENT_AT_MOST)
                                    .toMillis());
            soft.assertThat(rejoinedMillis)
                    .as("%s owns buckets again within 15 s of SIGCONT", victim.name())
                    .isNotNull();
            soft.assertThat(publishedAgainMillis)
                    .as("%s publishes again within 15 s of SIGCONT", victim.name())
                    .isNotNull();
            checkTrickle(soft, writer);
            soft.assertAll();
        } finally {
            proxies.values().forEach(FreezingProxy::close);
        }
    }

    /**
     * Widens the window a freeze in a claim holding bucket locks must hit: a statement trigger on
     * the outbox table makes the server sleep {@link #PARK_DELAY} after a statement that parks rows
     * ({@code SET parked = TRUE}, run under the bucket locks the claim got), for the sessions of
     * the relay named in {@code drill_slow_park} only (child relays' sessions carry their name as
     * {@code application_name}). Freezing the relay while its session sleeps there leaves, once the
     * statement ends, its claim transaction idle holding bucket locks, every time. The relay's code
     * is not changed; only the server is slower for it.
     */
    private static void slowParking(Drill d) throws SQLException {
        String table = d.db.store().tableName();
        d.db.jdbi()
                .<SQLException>useHandle(
                        h -> {
                            try (var st = h.getConnection().createStatement()) {
                                st.execute(
                                        "CREATE TABLE IF NOT EXISTS drill_slow_park (app text"
                                                + " PRIMARY KEY)");
                                st.execute(
                                        "CREATE OR REPLACE FUNCTION drill_slow_park() RETURNS"
                                                + " trigger LANGUAGE plpgsql AS $$ BEGIN IF"
                                                + " current_query() LIKE '%SET parked = TRUE%' AND"
                                                + " EXISTS (SELECT 1 FROM drill_slow_park WHERE app"
                                                + " = current_setting('application_name')) THEN"
                                                + " PERFORM pg_sleep("
                                                + PARK_DELAY.toMillis() / 1000.0
                                                + "); END IF; RETURN NULL; END $$");
                                st.execute("DROP TRIGGER IF EXISTS drill_slow_park ON " + table);
                                st.execute(
                                        "CREATE TRIGGER drill_slow_park AFTER UPDATE OF parked ON "
                                                + table
                                                + " FOR EACH STATEMENT EXECUTE FUNCTION"
                                                + " drill_slow_park()");
                            }
                        });
    }

    /**
     * Slows the parking of {@code relay} and waits until its session sleeps in a parking statement
     * holding bucket locks ({@link #slowParking}). A member parks a row only behind a lease not its
     * own (behind its own it skips a few rows of each key, and its walk stops after as many skips
     * as its batch), so once the handovers of the start are over it may park nothing for a long
     * time; the first unleased messages of {@link #HELD_HEADS} keys of its buckets are therefore
     * leased for an hour to an owner that never completes them, as a crashed relay's would be, and
     * each new message of those keys is parked by its next claim. {@link #stopSlowParking} ends
     * both.
     */
    private static void awaitParking(Drill d, ChildRelay relay) throws InterruptedException {
        d.db.jdbi()
                .useHandle(h -> h.execute("INSERT INTO drill_slow_park VALUES (?)", relay.name()));
        int held = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (d.db.jdbi()
                        .withHandle(
                                h ->
                                        h.createQuery(
                                                        "SELECT count(*) FROM pg_stat_activity"
                                                                + " WHERE application_name = :app"
                                                                + " AND wait_event = 'PgSleep'")
                                                .bind("app", relay.name())
                                                .mapTo(Integer.class)
                                                .one())
                == 0) {
            if (held < HELD_HEADS) {
                held += holdFirstUnleased(d, relay, HELD_HEADS - held);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        relay.name()
                                + " parked no rows within 30 s, although the first unleased messages of "
                                + held
                                + " keys of its buckets are leased to another owner: no claim of"
                                + " it held bucket locks to be frozen in");
            }
            Thread.sleep(5);
        }
    }

    /**
     * Leases, to {@link #HEAD_HOLDER}, the first message not leased, parked or dead of up to {@code
     * n} keys of the relay's buckets: the relay's own leases (usually its keys' heads) finish, and
     * then its claims find the rest of those keys behind a lease not its own and park them.
     *
     * @return how many keys got such a lease
     */
    private static int holdFirstUnleased(Drill d, ChildRelay relay, int n) {
        String table = d.db.store().tableName();
        Map<Integer, String> owners = d.db.bucketOwners();
        int held = 0;
        for (String key : d.db.keysWithUnfinished()) {
            if (held == n) {
                break;
            }
            if (relay.name().equals(owners.get(Buckets.of(key)))) {
                held +=
                        d.db.jdbi()
                                .withHandle(
                                        h ->
                                                h.createUpdate(
                                                                "UPDATE "
                                                                        + table
                                                                        + " SET lease_owner = '"
                                                                        + HEAD_HOLDER
                                                                        + "', receipt = '"
                                                                        + HEAD_HOLDER
                                                                        + "', available_at ="
                                                                        + " clock_timestamp() +"
                                                                        + " interval '1 hour'"
                                                                        + " WHERE id = (SELECT id"
                                                                        + " FROM "
                                                                        + table
                                                                        + " WHERE msg_key = :key"
                                                                        + " AND lease_owner IS"
                                                                        + " NULL AND NOT parked"
                                                                        + " AND dead_at IS NULL"
                                                                        + " ORDER BY seq LIMIT 1)"
                                                                        + " AND lease_owner IS"
                                                                        + " NULL")
                                                        .bind("key", key)
                                                        .execute());
            }
        }
        return held;
    }

    /**
     * Parks at full speed again, and lets the heads {@link #awaitParking} leased expire now: the
     * owner of their buckets takes them over as a crashed relay's leases.
     */
    private static void stopSlowParking(Drill d) {
        String table = d.db.store().tableName();
        d.db.jdbi()
                .useHandle(
                        h -> {
                            h.execute("DELETE FROM drill_slow_park");
                            h.execute(
                                    "UPDATE "
                                            + table
                                            + " SET available_at = clock_timestamp() WHERE"
                                            + " lease_owner = ?",
                                    HEAD_HOLDER);
                        });
    }

    /** How many keys' heads {@link #awaitParking} leases to {@link #HEAD_HOLDER}. */
    private static final int HELD_HEADS = 3;

    /** The lease owner of the heads {@link #awaitParking} holds: no relay. */
    private static final String HEAD_HOLDER = "drill-head-holder";

    /**
     * The transactions of this database idle for over 100 ms now (by backend pid and start), each
     * with its last statement and {@code [advisory locks: n]} when it holds advisory (bucket)
     * locks.
     */
    private static Map<String, String> idleTransactions(Drill d) {
        Map<String, String> idle = new TreeMap<>();
        d.db.jdbi()
                .useHandle(
                        h ->
                                h.createQuery(
                                                "SELECT a.pid || '@' || a.xact_start,"
                                                        + " left(regexp_replace(a.query, '\\s+',"
                                                        + " ' ', 'g'), 120) || coalesce('"
                                                        + " [advisory locks: ' || (SELECT"
                                                        + " nullif(count(*), 0) FROM pg_locks l"
                                                        + " WHERE l.pid = a.pid AND l.locktype ="
                                                        + " 'advisory') || ']', '') FROM"
                                                        + " pg_stat_activity a WHERE a.datname ="
                                                        + " current_database() AND a.state ="
                                                        + " 'idle in transaction' AND a.xact_start"
                                                        + " < clock_timestamp() - interval '100"
                                                        + " milliseconds'")
                                        .map(
                                                (rs, ctx) ->
                                                        idle.put(rs.getString(1), rs.getString(2)))
                                        .list());
        return idle;
    }

    /**
     * The transactions idle now and still idle, unchanged, 300 ms later: those of a frozen relay (a
     * running relay's transaction idle for a moment has moved on).
     */
    private static List<String> stillIdle(Drill d) throws InterruptedException {
        Map<String, String> first = idleTransactions(d);
        Thread.sleep(300);
        Map<String, String> second = idleTransactions(d);
        List<String> out = new ArrayList<>();
        first.forEach(
                (id, statement) -> {
                    if (statement.equals(second.get(id))) {
                        out.add(statement);
                    }
                });
        return out;
    }

    private static boolean frozenAsWanted(Freeze where, List<String> idle) {
        return switch (where) {
            case ANYWHERE -> true;
            case IN_RENEWAL -> idle.stream().anyMatch(ScaleOutFaultsTest::isRenewal);
            case IN_CLAIM_HOLDING_BUCKET_LOCKS, CONNECTIONS_IN_CLAIM_HOLDING_BUCKET_LOCKS ->
                    idle.stream().anyMatch(q -> q.contains("[advisory locks:") && !isRenewal(q));
        };
    }

    /** Whether a statement is one of a membership renewal's (store-jdbi's Members). */
    private static boolean isRenewal(String statement) {
        // the bucket-owner lock, the database's clock, prune / extend / join / list, assignment
        return statement.contains("ORDER BY bucket FOR UPDATE")
                || statement.contains("advisory_xact_lock($1, -1)") // the membership lock
                || statement.contains("SELECT bucket, owner FROM") // the owners, under it
                || statement.contains("SELECT clock_timestamp()")
                || (statement.contains("_members\"") && !statement.contains(" JOIN "))
                || statement.contains("_buckets\" SET owner");
    }

    @Test
    void
            membersJoinEveryTwoSecondsFromOneToFour_thenCloseOneByOneWithSigterm_bucketsMoveAtOnce_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        long seed = System.nanoTime();
        List<Map<String, Object>> joins = new ArrayList<>();
        List<Handover> closes = new ArrayList<>();
        List<String> stillOwnedAfterExit = new ArrayList<>();
        List<String> notGraceful = new ArrayList<>();
        try (Drill d = open("scale_out_join_leave", 1500 + 40 * RATE);
                PacedWriter writer = new PacedWriter(d.db, d.load, 1500, RATE).start()) {
            List<ChildRelay> relays = new ArrayList<>();
            for (int i = 1; i <= 4; i++) {
                Map<Integer, String> before = d.db.bucketOwners();
                ChildRelay r = d.childRelay("relay-" + i);
                relays.add(r);
                long joinedMillis = awaitOwnsBuckets(d, r, JOIN_TIMEOUT);
                Map<Integer, String> after = d.db.bucketOwners();
                Map<String, Object> join = new LinkedHashMap<>();
                join.put("relay", r.name());
                join.put("startToOwningBucketsMillis", joinedMillis);
                join.put("bucketsMoved", moved(before, after));
                join.put("bucketsTaken", owned(after, r.name()).size());
                join.put("spread", spread(after));
                joins.add(join);
                Thread.sleep(Math.max(0, r.startedAtMillis() + 2000 - System.currentTimeMillis()));
            }
            for (int i = 0; i < 3; i++) {
                ChildRelay r = relays.get(i);
                long t0 = System.currentTimeMillis();
                Handover h = Handover.before(d, "sigterm", r);
                boolean graceful = r.terminate(Duration.ofSeconds(30));
                long exitedAt = System.currentTimeMillis();
                h.eligibleFrom = exitedAt;
                h.figures.put("exitMillis", exitedAt - h.atMillis);
                h.figures.put("exitCode", r.exitValue());
                if (!graceful || !leftTheOutbox(r)) {
                    notGraceful.add(r.name());
                }
                Set<Integer> left = owned(d.db.bucketOwners(), r.name());
                h.figures.put("bucketsOwnedAfterExit", left.size());
                if (!left.isEmpty()) {
                    stillOwnedAfterExit.add(r.name() + ": " + left);
                }
                closes.add(h);
                Thread.sleep(Math.max(0, t0 + 2000 - System.currentTimeMillis()));
            }
            writer.finish();
            boolean drained = d.awaitDrained(Duration.ofMinutes(2));
            ChildRelay last = relays.get(3);
            boolean lastGraceful = last.terminate(Duration.ofSeconds(30));
            if (!lastGraceful || !leftTheOutbox(last)) {
                notGraceful.add(last.name());
            }
            List<Integer> exits = new ArrayList<>();
            for (ChildRelay r : relays) {
                exits.add(r.exitValue());
            }

            Map<String, Object> extra =
                    Drill.figures(
                            "from SIGTERM to the first publish by another relay of a message the closing"
                                    + " relay had leased (it releases or completes them when it closes)");
            extra.put("joins", joins);
            Handover.summarise(d, closes, extra);
            extra.put("membersAfterLastExit", d.db.store().members().size());
            extra.put("notGraceful", notGraceful);
            extra.put("seed", seed);
            SoftAssertions soft = reportAndVerify(d, extra, exits, writer, drained);
            soft.assertThat(notGraceful)
                    .as(
                            "relays that did not exit by themselves within 30 s of SIGTERM, or"
                                    + " did not log that they left the outbox")
                    .isEmpty();
            soft.assertThat(stillOwnedAfterExit)
                    .as("buckets still owned by a relay that closed and exited (it must leave)")
                    .isEmpty();
            soft.assertThat(d.db.store().members())
                    .as("members left after every relay closed")
                    .isEmpty();
            checkTakenOver(soft, d, closes, "SIGTERM", seed);
            checkTrickle(soft, writer);
            soft.assertAll();
        }
    }

    /**
     * Three member JVMs on one outbox, one whose clock runs {@link #SKEW} behind the machine's, one
     * {@code SKEW} ahead, one on time, joining in that order while a backlog drains (so buckets
     * whose messages are leased by one relay are handed to a relay with another clock). The store
     * times a member's claims by its own clock and a member sends its renewals in the store's frame
     * (the offset read at each membership renewal): no lease is taken over early nor granted or
     * renewed short, so the skewed relays publish their share with no duplicate. An outside drill
     * on 0.1 found 7.7 % duplicates with a relay 30 s ahead and 3.5 % with one 30 s behind.
     */
    @Test
    void
            threeMemberJvmsWithClocks30sAhead30sBehindAndOnTime_publishTheirShares_noLeaseTakenEarly_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        Map<String, Duration> clocks = new LinkedHashMap<>();
        // behind first: the relay that joins next, 60 s ahead of it, takes over buckets whose
        // messages it leased (by its own clock those leases would have ended long ago)
        clocks.put("relay-behind", SKEW.negated());
        clocks.put("relay-ahead", SKEW);
        clocks.put("relay-on-time", Duration.ZERO);
        int seconds = 15;
        // the trickle outlasts the joins (a few seconds each) and the 15 s after them
        try (Drill d = open("scale_out_clock_skew", 1500 + (seconds + 20) * RATE);
                PacedWriter writer = new PacedWriter(d.db, d.load, 1500, RATE).start()) {
            List<ChildRelay> relays = new ArrayList<>();
            Map<String, Object> joined = new LinkedHashMap<>();
            for (Map.Entry<String, Duration> c : clocks.entrySet()) {
                ChildRelay r = d.childRelay(c.getKey(), SETTINGS.withClockOffset(c.getValue()));
                relays.add(r);
                joined.put(c.getKey(), awaitOwnsBuckets(d, r, JOIN_TIMEOUT));
                Thread.sleep(1000); // its buckets' messages are leased when the next one joins
            }
            Thread.sleep(Duration.ofSeconds(seconds).toMillis());
            writer.finish();
            boolean drained = d.awaitDrained(Duration.ofMinutes(2));
            List<Integer> all = new ArrayList<>();
            for (int seq = 0; seq < d.ledger.expected(); seq++) {
                all.add(seq);
            }
            Map<String, Integer> published = new LinkedHashMap<>();
            Map<String, Boolean> sawOffset = new LinkedHashMap<>();
            List<Integer> exits = new ArrayList<>();
            for (ChildRelay r : relays) {
                exits.add(r.stop(Duration.ofSeconds(20)));
                published.put(
                        r.name(), d.ledger.countWithRecord(all, (at, by) -> r.name().equals(by)));
                sawOffset.put(
                        r.name(),
                        r.logLines().stream().anyMatch(l -> l.contains("the store's clock is")));
            }
            long duplicates = d.ledger.duplicates();

            Map<String, Object> extra = new LinkedHashMap<>();
            Map<String, Long> offsets = new LinkedHashMap<>();
            clocks.forEach((name, offset) -> offsets.put(name, offset.toMillis()));
            extra.put("clockOffsetsMillis", offsets);
            extra.put("startToOwningBucketsMillis", joined);
            extra.put("recordsPerRelay", published);
            extra.put("loggedTheStoresClockOffset", sawOffset);
            SoftAssertions soft = reportAndVerify(d, extra, exits, writer, drained);
            for (String name : List.of("relay-ahead", "relay-behind")) {
                soft.assertThat(published.get(name))
                        .as("messages published by %s (its claims are not refused)", name)
                        .isPositive();
                soft.assertThat(sawOffset.get(name))
                        .as("%s logged the store's clock offset at its first renewal", name)
                        .isTrue();
            }
            soft.assertThat(sawOffset.get("relay-on-time"))
                    .as("relay-on-time logged no clock offset")
                    .isFalse();
            soft.assertThat(duplicates)
                    .as(
                            "duplicates: a lease taken over before it ended by the store's clock"
                                    + " (no relay was killed or paused)")
                    .isZero();
            checkTrickle(soft, writer);
            soft.assertAll();
        }
    }

    /**
     * Waits until a relay owns buckets (the engine joins on its member thread, after {@code
     * start()} returned).
     *
     * @return ms from the child JVM's start
     */
    private static long awaitOwnsBuckets(Drill d, ChildRelay r, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!d.db.bucketOwners().containsValue(r.name())) {
            if (!r.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        r
                                + " owned no bucket "
                                + (r.isAlive() ? "after " + timeout : "and exited")
                                + " (members: "
                                + d.db.store().members()
                                + "): "
                                + r.logTail());
            }
            Thread.sleep(10);
        }
        return System.currentTimeMillis() - r.startedAtMillis();
    }

    /**
     * The writer's trickle must outlast the faults (the load is sized for a machine about twice as
     * slow as the one the drills were written on); otherwise the later faults found buckets with
     * nothing to take over.
     */
    /**
     * Adds what every scale-out drill reports last (the relays' exit codes, when the writer's
     * trickle ran out, whether the outbox drained in time), writes the figures, and starts the soft
     * checks with the drill's own verification.
     */
    private static SoftAssertions reportAndVerify(
            Drill d,
            Map<String, Object> extra,
            List<Integer> exits,
            PacedWriter writer,
            boolean drained) {
        extra.put("exitCodes", exits);
        extra.put("trickleRanOutAtMillis", writer.trickleRanOutAtMillis());
        extra.put("drainedInTime", drained);
        d.report(extra);
        SoftAssertions soft = new SoftAssertions();
        soft.check(d::verify);
        return soft;
    }

    /**
     * Checks that for every handover the last key of the relay's buckets with messages to take over
     * was taken over by another relay within {@link #TAKEOVER_BOUND} of the fault ({@code after}
     * names it).
     */
    private static void checkTakenOver(
            SoftAssertions soft, Drill d, List<Handover> handovers, String after, long seed) {
        for (Handover h : handovers) {
            soft.assertThat(h.lastMillis(d))
                    .as(
                            "%s of %s: the last of the %d keys of its buckets with messages to take"
                                    + " over taken over by another relay (ms after %s; seed %d)",
                            h.kind, h.relay, h.eligible(d), after, seed)
                    .isNotNull()
                    .isLessThan(TAKEOVER_BOUND.toMillis());
        }
    }

    private static void checkTrickle(SoftAssertions soft, PacedWriter writer) {
        soft.assertThat(writer.trickleRanOutAtMillis())
                .as(
                        "when the writer's trickle ran out before the faults were over (0: it did"
                                + " not; the machine is too slow for the drill's load)")
                .isZero();
    }

    /** Whether a child's log says its relay left the outbox (engine Members, on close). */
    private static boolean leftTheOutbox(ChildRelay r) {
        String line = "relay '" + r.name() + "' left the outbox";
        return r.logLines().stream().anyMatch(l -> l.contains(line));
    }

    private static Drill open(String scenario, int messages) {
        return new Drill(
                scenario, messages, KEYS, SETTINGS, PostgresServer.shared(), KafkaSink::open);
    }

    /**
     * One fault of a member: its buckets at that moment, the keys of them that had messages in the
     * outbox, the leases it held (for {@link Drill#fault}), and per key the takeover by another
     * relay.
     */
    private static final class Handover {
        final String kind;
        final String relay;
        final long atMillis;
        final Set<String> keys;
        final Set<String> leased;
        final Map<String, Object> figures;

        /**
         * A key has something to take over if one of its messages was first published at or after
         * this time: the fault, or the exit of a relay that closed (it publishes while it closes).
         */
        long eligibleFrom;

        private Handover(
                Drill d,
                String kind,
                String relay,
                long atMillis,
                Set<Integer> buckets,
                Set<String> waiting,
                Set<String> leased) {
            this.kind = kind;
            this.relay = relay;
            this.atMillis = atMillis;
            this.eligibleFrom = atMillis;
            this.keys = keysIn(d.load, buckets);
            this.leased = leased;
            this.figures = d.fault(kind, relay, atMillis, leased, by -> !by.equals(relay));
            figures.put("bucketsOwned", buckets.size());
            figures.put("keysOfItsBuckets", keys.size());
            figures.put("keysWithMessagesInTheOutbox", waiting.size());
        }

        /**
         * Right after a fault that froze the relay (SIGKILL, SIGSTOP): nothing changes its buckets
         * or its rows until its member lease ends, so reading them now reads them at the fault.
         */
        static Handover at(Drill d, String kind, ChildRelay relay, long atMillis) {
            Set<Integer> buckets = owned(d.db.bucketOwners(), relay.name());
            Set<String> waiting = new TreeSet<>(d.db.keysWithUnfinished());
            waiting.retainAll(keysIn(d.load, buckets));
            return new Handover(
                    d, kind, relay.name(), atMillis, buckets, waiting, relay.journal().leasedIds());
        }

        /** Right before a fault of a running relay (SIGTERM): its buckets and waiting keys. */
        static Handover before(Drill d, String kind, ChildRelay relay) {
            Set<Integer> buckets = owned(d.db.bucketOwners(), relay.name());
            Set<String> waiting = new TreeSet<>(d.db.keysWithUnfinished());
            waiting.retainAll(keysIn(d.load, buckets));
            Set<String> leased = relay.journal().leasedIds();
            return new Handover(
                    d, kind, relay.name(), System.currentTimeMillis(), buckets, waiting, leased);
        }

        /**
         * Per key of its buckets with something to take over ({@link #eligibleFrom}): ms from the
         * fault to the first publish of a message of the key by another relay, null if there is
         * none.
         */
        Map<String, Long> takeoverByKey(Drill d) {
            Map<String, Long> out = new TreeMap<>();
            for (String key : keys) {
                List<Integer> seqs = seqsOf(d.load, key);
                boolean eligible = false;
                for (int seq : seqs) {
                    OptionalLong first = d.ledger.firstRecordAt(seq);
                    if (first.isPresent() && first.getAsLong() >= eligibleFrom) {
                        eligible = true;
                        break;
                    }
                }
                if (!eligible) {
                    continue;
                }
                OptionalLong t = d.ledger.firstPublishAt(atMillis, seqs, by -> !by.equals(relay));
                out.put(key, t.isPresent() ? t.getAsLong() - atMillis : null);
            }
            return out;
        }

        /** How many keys had something to take over. */
        int eligible(Drill d) {
            return takeoverByKey(d).size();
        }

        /**
         * When the last key with something to take over was taken over (ms after the fault), or
         * null if one was not (or none had anything).
         */
        Long lastMillis(Drill d) {
            Map<String, Long> byKey = takeoverByKey(d);
            if (byKey.isEmpty() || byKey.containsValue(null)) {
                return null;
            }
            return byKey.values().stream().mapToLong(Long::longValue).max().getAsLong();
        }

        /**
         * Waits, at most {@code timeout}, until every key of its buckets was taken over or has no
         * message the writer enqueued so far left unpublished.
         */
        boolean awaitTakenOver(Drill d, PacedWriter writer, Duration timeout)
                throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            Set<String> pending = new TreeSet<>(keys);
            while (true) {
                int written = writer.written();
                pending.removeIf(
                        key -> {
                            List<Integer> seqs = seqsOf(d.load, key);
                            if (d.ledger
                                    .firstPublishAt(atMillis, seqs, by -> !by.equals(relay))
                                    .isPresent()) {
                                return true;
                            }
                            for (int seq : seqs) {
                                if (seq < written && d.ledger.firstRecordAt(seq).isEmpty()) {
                                    return false;
                                }
                            }
                            return true;
                        });
                if (pending.isEmpty()) {
                    return true;
                }
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Thread.sleep(20);
            }
        }

        /** The sequence numbers of every message of the relay's buckets. */
        List<Integer> seqsOfBuckets(Drill d) {
            List<Integer> seqs = new ArrayList<>();
            for (String key : keys) {
                seqs.addAll(seqsOf(d.load, key));
            }
            return seqs;
        }

        /** Adds each handover's takeover figures to its fault and a summary to {@code extra}. */
        static void summarise(Drill d, List<Handover> handovers, Map<String, Object> extra) {
            List<Long> firsts = new ArrayList<>();
            List<Long> lasts = new ArrayList<>();
            for (Handover h : handovers) {
                Map<String, Long> byKey = h.takeoverByKey(d);
                Long first =
                        byKey.values().stream()
                                .filter(java.util.Objects::nonNull)
                                .min(Long::compare)
                                .orElse(null);
                Long last = h.lastMillis(d);
                h.figures.put("keysWithMessagesToTakeOver", byKey.size());
                h.figures.put(
                        "keysTakenOver",
                        byKey.values().stream().filter(java.util.Objects::nonNull).count());
                h.figures.put("firstKeyTakenOverMillis", first);
                h.figures.put("lastKeyTakenOverMillis", last);
                if (first != null) {
                    firsts.add(first);
                }
                if (last != null) {
                    lasts.add(last);
                }
            }
            extra.put(
                    "takeoverMeans",
                    "per fault, over the keys of the faulty member's buckets at the fault that had"
                            + " a message to take over (first published after the fault, or after"
                            + " the exit of a closed relay): ms from the fault to the first publish"
                            + " of a message of the key by another relay; first and last key");
            extra.put("firstKeyTakenOverMillis", Drill.summary(firsts));
            extra.put("lastKeyTakenOverMillis", Drill.summary(lasts));
        }
    }

    static Set<Integer> owned(Map<Integer, String> owners, String member) {
        Set<Integer> out = new TreeSet<>();
        owners.forEach(
                (bucket, owner) -> {
                    if (owner.equals(member)) {
                        out.add(bucket);
                    }
                });
        return out;
    }

    static int moved(Map<Integer, String> before, Map<Integer, String> after) {
        int n = 0;
        for (int b = 0; b < Buckets.COUNT; b++) {
            if (!java.util.Objects.equals(before.get(b), after.get(b))) {
                n++;
            }
        }
        return n;
    }

    static Map<String, Integer> spread(Map<Integer, String> owners) {
        Map<String, Integer> out = new TreeMap<>();
        owners.values().forEach(o -> out.merge(o, 1, Integer::sum));
        return out;
    }

    /** The load's keys whose bucket is one of {@code buckets}. */
    static Set<String> keysIn(KeyedLoad load, Collection<Integer> buckets) {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < load.keys(); i++) {
            String key = load.key(i);
            if (buckets.contains(Buckets.of(key))) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static final Map<String, List<Integer>> SEQS = new HashMap<>();

    /** The sequence numbers of one key of the load. */
    static synchronized List<Integer> seqsOf(KeyedLoad load, String key) {
        return SEQS.computeIfAbsent(
                load.run() + "/" + key,
                k -> {
                    int first = Integer.parseInt(key.substring("key-".length()));
                    List<Integer> seqs = new ArrayList<>();
                    for (int s = first; s < load.messages(); s += load.keys()) {
                        seqs.add(s);
                    }
                    return seqs;
                });
    }
}
