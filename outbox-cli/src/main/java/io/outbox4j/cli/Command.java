package io.outbox4j.cli;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Member;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.cli.Arguments.UsageException;
import io.outbox4j.cli.OutboxCli.Output;
import io.outbox4j.cli.internal.Settings;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * One command of the command line, checked before the store is opened: a command that is run has
 * valid arguments, and a command with bad arguments changes nothing.
 */
abstract class Command {
    private static final Set<String> STORE_OPTIONS =
            Set.of("--store", "--user", "--password", "--table", "--database", "--config");
    private static final Set<String> FILTERS = Set.of("--topic", "--dead-before", "--dead-from");

    /** The default page size of {@code dead-letters list}. */
    static final int DEFAULT_LIST_LIMIT = 50;

    /** Reason texts are cut to this length in tables ({@code show} and {@code --json} have all). */
    private static final int REASON_WIDTH = 72;

    final Clock clock;

    Command(Clock clock) {
        this.clock = clock;
    }

    abstract int run(OutboxAdmin admin, String store, Output output, PrintStream err);

    static Command of(Arguments a, Clock clock) {
        List<String> w = a.words;
        return switch (w.get(0)) {
            case "stats" -> {
                expectNoOperands(w, 1, "stats");
                a.allowOnly("stats", union(Set.of("--json")));
                yield new Stats(clock);
            }
            case "members" -> {
                expectNoOperands(w, 1, "members");
                a.allowOnly("members", union(Set.of("--json")));
                yield new Members(clock);
            }
            case "dead-letters" -> deadLetters(a, clock);
            case "relay" ->
                    throw new UsageException(
                            "the relay runs from the outbox4j distribution (outbox-relay): ./outbox4j relay"
                                    + " --config FILE, or java -cp 'lib/*' io.outbox4j.relay.Outbox4j relay");
            default ->
                    throw new UsageException(
                            "unknown command '"
                                    + w.get(0)
                                    + "'; commands: relay, stats, members, dead-letters");
        };
    }

    private static Command deadLetters(Arguments a, Clock clock) {
        List<String> w = a.words;
        if (w.size() < 2) {
            throw new UsageException(
                    "dead-letters needs a subcommand: list, show, replay or discard");
        }
        String sub = w.get(1);
        String name = "dead-letters " + sub;
        List<String> operands = w.subList(2, w.size());
        switch (sub) {
            case "list" -> {
                expectNoOperands(w, 2, name);
                a.allowOnly(name, union(FILTERS, Set.of("--limit", "--after", "--all", "--json")));
                if (a.flag("--all") && a.option("--after").isPresent()) {
                    throw new UsageException("give --all or --after, not both");
                }
                int limit = limit(a);
                DeadLetterQuery q = filter(a, clock.instant()).limit(limit);
                if (a.option("--after").isPresent()) {
                    q = q.after(nonBlank("--after", a.option("--after").get()));
                }
                return new ListDeadLetters(clock, q, a.flag("--all"));
            }
            case "show" -> {
                a.allowOnly(name, union(Set.of("--payload", "--header-values", "--json")));
                if (operands.size() != 1) {
                    throw new UsageException(
                            "dead-letters show needs exactly one message id, but was given "
                                    + operands.size());
                }
                return new Show(
                        clock,
                        nonBlank("message id", operands.get(0)),
                        a.flag("--payload"),
                        a.flag("--header-values"));
            }
            case "replay", "discard" -> {
                a.allowOnly(name, union(FILTERS, Set.of("--all", "--json")));
                boolean replay = sub.equals("replay");
                boolean filtered = FILTERS.stream().anyMatch(f -> a.option(f).isPresent());
                if (a.flag("--all")) {
                    if (!operands.isEmpty()) {
                        throw new UsageException(name + ": give message ids or --all, not both");
                    }
                    return new Change(clock, replay, List.of(), filter(a, clock.instant()), true);
                }
                if (filtered) {
                    throw new UsageException(
                            name
                                    + ": filters (--topic, --dead-before, --dead-from) select dead letters only with"
                                    + " --all; to change single ones, name their ids");
                }
                if (operands.isEmpty()) {
                    throw new UsageException(
                            name
                                    + " needs the message ids, or --all (with optional filters) for every dead"
                                    + " letter");
                }
                Set<String> ids = new LinkedHashSet<>();
                for (String id : operands) {
                    ids.add(nonBlank("message id", id));
                }
                return new Change(clock, replay, List.copyOf(ids), DeadLetterQuery.all(), false);
            }
            default ->
                    throw new UsageException(
                            "unknown subcommand 'dead-letters "
                                    + sub
                                    + "'; use list, show, replay or discard");
        }
    }

    @SafeVarargs
    private static Set<String> union(Set<String> first, Set<String>... more) {
        Set<String> all = new LinkedHashSet<>(STORE_OPTIONS);
        all.addAll(first);
        for (Set<String> m : more) {
            all.addAll(m);
        }
        return all;
    }

    private static void expectNoOperands(List<String> words, int from, String command) {
        if (words.size() > from) {
            throw new UsageException(
                    command + " takes no operand, but was given '" + words.get(from) + "'");
        }
    }

    private static String nonBlank(String what, String value) {
        if (value.isBlank()) {
            throw new UsageException(what + " must not be blank");
        }
        return value;
    }

    private static int limit(Arguments a) {
        Optional<String> v = a.option("--limit");
        if (v.isEmpty()) {
            return DEFAULT_LIST_LIMIT;
        }
        try {
            int n = Integer.parseInt(v.get().strip());
            if (n >= 1 && n <= DeadLetterQuery.MAX_LIMIT) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(
                "--limit must be a whole number between 1 and "
                        + DeadLetterQuery.MAX_LIMIT
                        + ", but was '"
                        + v.get()
                        + "'");
    }

    private static DeadLetterQuery filter(Arguments a, Instant now) {
        DeadLetterQuery q = DeadLetterQuery.all();
        if (a.option("--topic").isPresent()) {
            try {
                q = q.topic(a.option("--topic").get());
            } catch (IllegalArgumentException e) {
                throw new UsageException("--topic: " + e.getMessage());
            }
        }
        if (a.option("--dead-before").isPresent()) {
            q = q.deadBefore(when("--dead-before", a.option("--dead-before").get(), now));
        }
        if (a.option("--dead-from").isPresent()) {
            q = q.deadFrom(when("--dead-from", a.option("--dead-from").get(), now));
        }
        if (q.deadFrom().isPresent()
                && q.deadBefore().isPresent()
                && !q.deadFrom().get().isBefore(q.deadBefore().get())) {
            throw new UsageException(
                    "--dead-from ("
                            + q.deadFrom().get()
                            + ") must be before --dead-before ("
                            + q.deadBefore().get()
                            + ")");
        }
        return q;
    }

    /** An instant, a date (midnight UTC) or an age before now ({@code 7d}, {@code 12h}). */
    static Instant when(String option, String value, Instant now) {
        String v = value.strip();
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            // not an instant
        }
        try {
            return LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant();
        } catch (DateTimeParseException e) {
            // not a date
        }
        Duration age = Settings.parseDuration(v);
        if (age != null && !age.isNegative()) {
            return now.minus(age);
        }
        throw new UsageException(
                option
                        + " must be an instant (2026-12-01T00:00:00Z), a date (2026-12-01) or an age (7d, 12h,"
                        + " 30m), but was '"
                        + value
                        + "'");
    }

    // --------------------------------------------------------------------------------------------

    /** {@code stats}. */
    static final class Stats extends Command {
        Stats(Clock clock) {
            super(clock);
        }

        @Override
        int run(OutboxAdmin admin, String store, Output output, PrintStream err) {
            OutboxStatistics s = admin.statistics(clock.instant());
            PrintStream out = output.out();
            if (output.json()) {
                Map<String, Object> topics = new LinkedHashMap<>();
                new TreeMap<>(s.byTopic()).forEach((t, c) -> topics.put(t, counts(c)));
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("at", s.at());
                doc.put("total", counts(s.total()));
                doc.put("blockedKeys", s.blockedKeys());
                doc.put("topics", topics);
                if (admin instanceof OutboxMembership m) {
                    doc.put("members", Members.json(m.members()));
                }
                out.println(Json.write(doc));
                return OutboxCli.OK;
            }
            out.println("Outbox " + store + ", at " + Text.time(s.at()));
            out.println();
            Table t =
                    new Table("TOPIC", "READY", "DELAYED", "LEASED", "DEAD", "OLDEST READY")
                            .numeric(1, 2, 3, 4, 5);
            new TreeMap<>(s.byTopic()).forEach((topic, c) -> row(t, topic, c));
            row(t, "(all topics)", s.total());
            out.print(t.render());
            out.println();
            out.println(
                    "Blocked keys: "
                            + s.blockedKeys()
                            + (s.blockedKeys() > 0
                                    ? " (a dead letter holds back the later messages of each;"
                                            + " replay or discard it)"
                                    : ""));
            if (admin instanceof OutboxMembership m) {
                List<Member> members = m.members();
                long live = members.stream().filter(Member::live).count();
                out.println(
                        "Relays (members): "
                                + live
                                + " live"
                                + (members.size() > live
                                        ? ", " + (members.size() - live) + " lapsed"
                                        : "")
                                + " sharing "
                                + Buckets.COUNT
                                + " buckets (outbox4j members: who owns how many)");
            }
            return OutboxCli.OK;
        }

        private static void row(Table t, String topic, TopicStatistics c) {
            t.row(
                    topic,
                    c.ready(),
                    c.delayed(),
                    c.leased(),
                    c.dead(),
                    Text.age(c.oldestReadyAge()));
        }

        private static Map<String, Object> counts(TopicStatistics c) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ready", c.ready());
            m.put("delayed", c.delayed());
            m.put("leased", c.leased());
            m.put("dead", c.dead());
            m.put("oldestReadyAge", c.oldestReadyAge());
            return m;
        }
    }

    /** {@code members}: the relays sharing the outbox and the buckets each owns. */
    static final class Members extends Command {
        Members(Clock clock) {
            super(clock);
        }

        @Override
        int run(OutboxAdmin admin, String store, Output output, PrintStream err) {
            if (!(admin instanceof OutboxMembership membership)) {
                err.println(
                        "outbox4j: this store does not record members (it does not implement"
                                + " OutboxMembership); its relays claim every bucket");
                return OutboxCli.NOT_FOUND;
            }
            List<Member> members = membership.members();
            PrintStream out = output.out();
            if (output.json()) {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("buckets", Buckets.COUNT);
                doc.put("members", json(members));
                out.println(Json.write(doc));
                return OutboxCli.OK;
            }
            out.println("Outbox " + store + ": " + members.size() + " members");
            out.println();
            Table t = new Table("MEMBER", "LIVE", "BUCKETS", "LEASE UNTIL").numeric(2);
            int owned = 0;
            for (Member m : members) {
                t.row(m.id(), m.live() ? "yes" : "no", m.buckets(), Text.time(m.leaseUntil()));
                owned += m.live() ? m.buckets() : 0;
            }
            out.print(t.render());
            out.println();
            out.println(
                    owned == Buckets.COUNT
                            ? "Every one of the " + Buckets.COUNT + " buckets has a live owner."
                            : (Buckets.COUNT - owned)
                                    + " of "
                                    + Buckets.COUNT
                                    + " buckets have no live owner: their keyed messages wait until"
                                    + " a live relay renews (every third of its member lease)");
            return OutboxCli.OK;
        }

        static List<Map<String, Object>> json(List<Member> members) {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Member m : members) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("id", m.id());
                one.put("live", m.live());
                one.put("buckets", m.buckets());
                one.put("leaseUntil", m.leaseUntil());
                out.add(one);
            }
            return out;
        }
    }

    /** {@code dead-letters list}. */
    static final class ListDeadLetters extends Command {
        private final DeadLetterQuery query;
        private final boolean all;

        ListDeadLetters(Clock clock, DeadLetterQuery query, boolean all) {
            super(clock);
            this.query = query;
            this.all = all;
        }

        @Override
        int run(OutboxAdmin admin, String store, Output output, PrintStream err) {
            List<DeadMessage> items = new ArrayList<>();
            DeadLetterPage page = admin.deadLetters(query);
            items.addAll(page.items());
            while (all && page.next().isPresent()) {
                page = admin.deadLetters(query.after(page.next().get()));
                items.addAll(page.items());
            }
            Optional<String> next = all ? Optional.empty() : page.next();
            PrintStream out = output.out();
            if (output.json()) {
                List<Object> list = new ArrayList<>();
                for (DeadMessage d : items) {
                    list.add(summary(d));
                }
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("items", list);
                doc.put("next", next);
                out.println(Json.write(doc));
                return OutboxCli.OK;
            }
            if (items.isEmpty()) {
                out.println("No dead letters" + (filtered() ? " match the filter." : "."));
                return OutboxCli.OK;
            }
            Table t = new Table("ID", "TOPIC", "KEY", "ATTEMPTS", "DEAD AT", "REASON").numeric(3);
            for (DeadMessage d : items) {
                Message m = d.message();
                t.row(
                        m.id(),
                        m.topic(),
                        m.key().orElse("-"),
                        d.attempts(),
                        Text.time(d.deadAt()),
                        Text.truncate(Text.simpleClassNames(d.reason()), REASON_WIDTH));
            }
            out.print(t.render());
            out.println();
            out.println(
                    items.size()
                            + (items.size() == 1 ? " dead letter" : " dead letters")
                            + (next.isPresent() ? " on this page" : "")
                            + ". Details: outbox4j dead-letters show ID");
            next.ifPresent(
                    c ->
                            out.println(
                                    "Next page: outbox4j dead-letters list --after '"
                                            + c
                                            + "' (same filters), or --all for every page"));
            return OutboxCli.OK;
        }

        private boolean filtered() {
            return query.topic().isPresent()
                    || query.deadBefore().isPresent()
                    || query.deadFrom().isPresent();
        }
    }

    /** {@code dead-letters show ID}. */
    static final class Show extends Command {
        private final String id;
        private final boolean payload;
        private final boolean headerValues;

        Show(Clock clock, String id, boolean payload, boolean headerValues) {
            super(clock);
            this.id = id;
            this.payload = payload;
            this.headerValues = headerValues;
        }

        @Override
        int run(OutboxAdmin admin, String store, Output output, PrintStream err) {
            Optional<DeadMessage> found = find(admin, id);
            if (found.isEmpty()) {
                err.println(
                        "outbox4j: no dead letter with id '"
                                + Text.oneLine(id)
                                + "' (it may be waiting, in flight, published, replayed or discarded)");
                return OutboxCli.NOT_FOUND;
            }
            DeadMessage d = found.get();
            Message m = d.message();
            Optional<String> lastError = admin.lastError(id).filter(e -> !e.equals(d.reason()));
            PrintStream out = output.out();
            if (output.json()) {
                Map<String, Object> doc = summary(d);
                doc.put("module", m.module());
                doc.put("contentType", m.contentType());
                doc.put("occurredAt", m.occurredAt());
                doc.put("notBefore", m.notBefore());
                doc.put("payloadBytes", m.payloadSize());
                if (headerValues) {
                    doc.put("headers", new LinkedHashMap<>(m.headers()));
                } else {
                    doc.put("headerNames", List.copyOf(m.headers().keySet()));
                }
                doc.put("lastError", lastError);
                if (payload) {
                    Optional<String> text = utf8(m.payload());
                    if (text.isPresent()) {
                        doc.put("payload", text.get());
                    } else {
                        doc.put("payloadBase64", Base64.getEncoder().encodeToString(m.payload()));
                    }
                }
                out.println(Json.write(doc));
                return OutboxCli.OK;
            }
            field(out, "id", m.id());
            field(out, "topic", m.topic());
            field(out, "key", m.key().orElse("-"));
            field(out, "module", m.module());
            field(out, "content type", m.contentType());
            field(out, "attempts", String.valueOf(d.attempts()));
            field(out, "occurred at", m.occurredAt().toString());
            field(out, "enqueued at", d.enqueuedAt().toString());
            m.notBefore().ifPresent(nb -> field(out, "not before", nb.toString()));
            field(out, "dead at", d.deadAt().toString());
            field(out, "reason", d.reason());
            lastError.ifPresent(e -> field(out, "last error", e));
            if (m.headers().isEmpty()) {
                field(out, "headers", "none");
            } else if (headerValues) {
                field(out, "headers", "");
                m.headers()
                        .forEach(
                                (k, v) ->
                                        out.println(
                                                "  " + Text.oneLine(k) + ": " + Text.oneLine(v)));
            } else {
                field(
                        out,
                        "headers",
                        String.join(", ", m.headers().keySet())
                                + " (values hidden; --header-values shows them)");
            }
            if (payload) {
                Optional<String> text = utf8(m.payload());
                field(
                        out,
                        "payload",
                        m.payloadSize() + " bytes" + (text.isPresent() ? "" : ", base64:"));
                out.println(
                        text.map(Text::printable)
                                .orElseGet(() -> Base64.getEncoder().encodeToString(m.payload())));
            } else {
                field(out, "payload", m.payloadSize() + " bytes (hidden; --payload prints it)");
            }
            out.println();
            out.println(
                    "Replay: outbox4j dead-letters replay "
                            + m.id()
                            + "   Discard: outbox4j dead-letters discard "
                            + m.id());
            return OutboxCli.OK;
        }

        private static void field(PrintStream out, String name, String value) {
            out.println(String.format("%-13s %s", name + ":", Text.oneLine(value)).stripTrailing());
        }

        private static Optional<String> utf8(byte[] bytes) {
            try {
                return Optional.of(
                        StandardCharsets.UTF_8
                                .newDecoder()
                                .onMalformedInput(CodingErrorAction.REPORT)
                                .onUnmappableCharacter(CodingErrorAction.REPORT)
                                .decode(ByteBuffer.wrap(bytes))
                                .toString());
            } catch (CharacterCodingException e) {
                return Optional.empty();
            }
        }
    }

    /** {@code dead-letters replay|discard}. */
    static final class Change extends Command {
        private final boolean replay;
        private final List<String> ids;
        private final DeadLetterQuery filter;
        private final boolean all;

        Change(Clock clock, boolean replay, List<String> ids, DeadLetterQuery filter, boolean all) {
            super(clock);
            this.replay = replay;
            this.ids = ids;
            this.filter = filter;
            this.all = all;
        }

        @Override
        int run(OutboxAdmin admin, String store, Output output, PrintStream err) {
            String verb = replay ? "replayed" : "discarded";
            int changed = 0;
            if (all) {
                changed =
                        replay
                                ? admin.replayAll(filter, clock.instant())
                                : admin.discardAll(filter);
            } else {
                for (int from = 0; from < ids.size(); from += DeadLetterQuery.MAX_LIMIT) {
                    List<String> chunk =
                            ids.subList(
                                    from, Math.min(ids.size(), from + DeadLetterQuery.MAX_LIMIT));
                    changed += replay ? admin.replay(chunk, clock.instant()) : admin.discard(chunk);
                }
            }
            boolean missing = !all && changed < ids.size();
            PrintStream out = output.out();
            if (output.json()) {
                Map<String, Object> doc = new LinkedHashMap<>();
                if (!all) {
                    doc.put("requested", ids.size());
                }
                doc.put(verb, changed);
                out.println(Json.write(doc));
            } else if (all) {
                out.println(
                        verb.substring(0, 1).toUpperCase(java.util.Locale.ROOT)
                                + verb.substring(1)
                                + " "
                                + changed
                                + (changed == 1 ? " dead letter" : " dead letters")
                                + (replay ? "; they are due now." : "."));
            } else {
                out.println(
                        (verb.substring(0, 1).toUpperCase(java.util.Locale.ROOT)
                                        + verb.substring(1))
                                + " "
                                + changed
                                + " of "
                                + ids.size()
                                + (ids.size() == 1 ? " dead letter" : " dead letters")
                                + (replay && changed > 0 ? "; due now." : "."));
            }
            if (missing) {
                err.println(
                        "outbox4j: "
                                + (ids.size() - changed)
                                + " of the ids named no dead letter (unknown, or not dead: waiting, in flight,"
                                + " published, or already replayed or discarded)");
                return OutboxCli.NOT_FOUND;
            }
            return OutboxCli.OK;
        }
    }

    // --------------------------------------------------------------------------------------------

    /** Finds a dead letter by id, page by page (the admin port lists; it has no lookup by id). */
    static Optional<DeadMessage> find(OutboxAdmin admin, String id) {
        DeadLetterQuery q = DeadLetterQuery.all().limit(DeadLetterQuery.MAX_LIMIT);
        DeadLetterPage page = admin.deadLetters(q);
        while (true) {
            for (DeadMessage d : page.items()) {
                if (d.message().id().equals(id)) {
                    return Optional.of(d);
                }
            }
            if (page.next().isEmpty()) {
                return Optional.empty();
            }
            page = admin.deadLetters(q.after(page.next().get()));
        }
    }

    /** The fields of a dead letter that are safe to print: no payload, no header values. */
    static Map<String, Object> summary(DeadMessage d) {
        Message m = d.message();
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("id", m.id());
        o.put("topic", m.topic());
        o.put("key", m.key());
        o.put("attempts", d.attempts());
        o.put("enqueuedAt", d.enqueuedAt());
        o.put("deadAt", d.deadAt());
        o.put("reason", d.reason());
        return o;
    }
}
