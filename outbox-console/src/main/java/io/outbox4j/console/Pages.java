package io.outbox4j.console;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Member;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.console.OutboxConsole.RelayStatus;
import io.outbox4j.console.OutboxConsole.Request;
import io.outbox4j.console.OutboxConsole.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
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
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The console's pages and actions: routing, authentication, CSRF checks and rendering. */
final class Pages {
    /** The policy of every response: no script at all, styles from the console only. */
    static final String CSP =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
                    + " frame-ancestors 'none'; base-uri 'none'";

    /** How many dead letters a replay or discard by filter counts before it asks. */
    static final int COUNT_LIMIT = 100_000;

    private static final byte[] CSS = css();

    private final OutboxAdmin admin;
    private final @Nullable OutboxMembership membership;
    private final Supplier<List<RelayStatus>> relays;
    private final boolean writeEnabled;
    private final boolean payloadsEnabled;
    private final Clock clock;
    private final int pageSize;
    private final String title;
    private final Guard guard;

    Pages(OutboxConsole.Builder b) {
        this.admin = b.admin;
        this.membership = b.membership;
        this.relays = b.relays;
        this.writeEnabled = b.writeEnabled;
        this.payloadsEnabled = b.payloadsEnabled;
        this.clock = b.clock;
        this.pageSize = b.pageSize;
        this.title = b.title;
        this.guard = new Guard(b.basicUser, b.basicPassword, b.hostAuthentication, b.secret);
    }

    boolean writeEnabled() {
        return writeEnabled;
    }

    /** A request that cannot be answered as asked: its status and message. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        Refusal(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /** What one request may do, once its operator is known. */
    private record Caller(Optional<String> user, boolean canWrite, boolean canSeePayloads) {}

    Response handle(Request r) {
        Optional<String> user;
        Optional<Response> challenge = guard.challenge(r);
        if (challenge.isPresent()) {
            return challenge.get();
        }
        user = guard.user(r);
        Caller caller =
                new Caller(
                        user,
                        writeEnabled && user.isPresent(),
                        payloadsEnabled && user.isPresent());
        try {
            String path = r.path();
            if (path.isEmpty()) {
                return redirect(r.basePath() + "/");
            }
            if (path.equals("/style.css")) {
                requireRead(r);
                return new Response(200, headers("text/css; charset=utf-8"), CSS);
            }
            return switch (path) {
                case "/" -> page(200, r, "Overview", overview(r, caller));
                case "/dead-letters" -> {
                    requireRead(r);
                    yield page(200, r, "Dead letters", deadLetters(r, caller));
                }
                case "/message" -> {
                    requireRead(r);
                    yield page(200, r, "Dead letter", message(r, caller));
                }
                case "/confirm" -> {
                    write(r, caller);
                    yield page(200, r, "Confirm", confirm(r));
                }
                case "/apply" -> {
                    write(r, caller);
                    yield apply(r);
                }
                default -> throw new Refusal(404, "No such page.");
            };
        } catch (Refusal e) {
            return page(e.status, r, "Refused", refusal(r, e));
        } catch (RuntimeException e) {
            Html h = new Html();
            h.raw("<p class=\"error\">The store failed: ")
                    .text(e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()))
                    .raw("</p>");
            return page(500, r, "Error", h.toString());
        }
    }

    private static void requireRead(Request r) {
        if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
            throw new Refusal(405, "This page answers GET only.");
        }
    }

    /** Checks a write: enabled, POST, authenticated, same site, synchronizer token. */
    private void write(Request r, Caller caller) {
        if (!r.method().equals("POST")) {
            throw new Refusal(405, "Write actions are POST only.");
        }
        if (!writeEnabled) {
            throw new Refusal(403, "Write actions are disabled in this deployment.");
        }
        if (caller.user().isEmpty()) {
            throw new Refusal(401, "Write actions need an authenticated operator.");
        }
        guard.checkSameSite(r);
        guard.checkToken(r, caller.user().get());
    }

    // ---------------------------------------------------------------------------------------------
    // Overview

    private String overview(Request r, Caller caller) {
        requireRead(r);
        Instant now = clock.instant();
        OutboxStatistics stats = admin.statistics(now);
        Html h = new Html();
        h.raw("<section><h2>Backlog</h2>");
        h.raw("<p class=\"summary\">")
                .raw("<span class=\"figure\" id=\"blocked-keys\">")
                .text(Long.toString(stats.blockedKeys()))
                .raw("</span> blocked key(s) &middot; judged at ")
                .text(Html.time(stats.at()))
                .raw("</p>");
        h.raw("<table id=\"topics\"><thead><tr><th>Topic</th><th class=\"n\">Ready</th>")
                .raw("<th class=\"n\">Delayed</th><th class=\"n\">Leased</th>")
                .raw(
                        "<th class=\"n\">Dead</th><th class=\"n\">Oldest ready</th></tr></thead><tbody>");
        for (Map.Entry<String, TopicStatistics> e : new TreeMap<>(stats.byTopic()).entrySet()) {
            topicRow(h, r, e.getKey(), e.getValue(), false);
        }
        if (stats.byTopic().isEmpty()) {
            h.raw("<tr><td colspan=\"6\" class=\"empty\">The outbox is empty.</td></tr>");
        }
        h.raw("</tbody><tfoot>");
        topicRow(h, r, "All topics", stats.total(), true);
        h.raw("</tfoot></table></section>");

        if (stats.blockedKeys() > 0) {
            blockedKeys(h, r);
        }
        h.raw("<section><h2>Relays</h2>");
        List<RelayStatus> local = relays.get();
        if (!local.isEmpty()) {
            h.raw("<table id=\"relays\"><thead><tr><th>Relay (this process)</th><th>State</th>")
                    .raw("<th>Details</th></tr></thead><tbody>");
            for (RelayStatus s : local) {
                h.raw("<tr><td>")
                        .text(s.name())
                        .raw("</td><td><span class=\"state ")
                        .text(s.state().toLowerCase(java.util.Locale.ROOT))
                        .raw("\">")
                        .text(s.state())
                        .raw("</span></td><td><dl class=\"inline\">");
                s.details()
                        .forEach(
                                (k, v) ->
                                        h.raw("<dt>")
                                                .text(k)
                                                .raw("</dt><dd>")
                                                .text(v)
                                                .raw("</dd>"));
                h.raw("</dl></td></tr>");
            }
            h.raw("</tbody></table>");
        }
        if (membership != null) {
            List<Member> members = membership.members();
            h.raw("<table id=\"members\"><thead><tr><th>Member</th><th>Live</th>")
                    .raw("<th>Lease until</th><th class=\"n\">Buckets</th></tr></thead><tbody>");
            int owned = 0;
            for (Member m : members) {
                owned += m.live() ? m.buckets() : 0;
                h.raw("<tr><td>")
                        .text(m.id())
                        .raw("</td><td>")
                        .raw(
                                m.live()
                                        ? "<span class=\"state running\">live</span>"
                                        : "<span class=\"state failing\">lapsed</span>")
                        .raw("</td><td>")
                        .text(Html.time(m.leaseUntil()))
                        .raw("</td><td class=\"n\">")
                        .text(Integer.toString(m.buckets()))
                        .raw("</td></tr>");
            }
            if (members.isEmpty()) {
                h.raw("<tr><td colspan=\"4\" class=\"empty\">No relay is a member: relays claim")
                        .raw(" without buckets (docs/scale-out.md).</td></tr>");
            }
            h.raw("</tbody></table>");
            if (!members.isEmpty()) {
                h.raw("<p class=\"summary\">")
                        .text(owned + " of 256 buckets owned by live members")
                        .raw("</p>");
            }
        } else if (local.isEmpty()) {
            h.raw("<p class=\"empty\">This store keeps no members.</p>");
        }
        h.raw("</section>");
        h.raw("<section><h2>This console</h2><p>")
                .text(
                        caller.canWrite()
                                ? "Replay and discard are enabled for you ("
                                        + caller.user().orElse("")
                                        + ")."
                                : writeEnabled
                                        ? "Replay and discard need an authenticated operator."
                                        : "Read-only: replay and discard are disabled.")
                .raw(" ")
                .text(
                        caller.canSeePayloads()
                                ? "Payloads can be shown one message at a time."
                                : "Payloads and header values are never shown.")
                .raw("</p></section>");
        return h.toString();
    }

    /** How many dead letters the blocked-keys table reads at most. */
    static final int BLOCKED_SCAN = DeadLetterQuery.MAX_LIMIT;

    /** How many blocked keys the overview lists at most. */
    static final int BLOCKED_SHOWN = 20;

    /**
     * The keys blocked by a dead letter, oldest first: the keys of the oldest dead letters (a dead
     * letter blocks its key), each with its topic and oldest dead letter.
     */
    private void blockedKeys(Html h, Request r) {
        DeadLetterPage page = admin.deadLetters(DeadLetterQuery.all().limit(BLOCKED_SCAN));
        Map<String, DeadMessage> oldest = new LinkedHashMap<>();
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (DeadMessage d : page.items()) {
            Optional<String> key = d.message().key();
            if (key.isEmpty()) {
                continue;
            }
            String id = d.message().topic() + "\u0000" + key.get();
            oldest.putIfAbsent(id, d);
            counts.merge(id, 1, Integer::sum);
        }
        h.raw("<section><h2>Blocked keys</h2><table id=\"blocked\"><thead><tr><th>Key</th>")
                .raw("<th>Topic</th><th>Dead since</th><th class=\"n\">Dead letters</th>")
                .raw("<th>Oldest dead letter</th></tr></thead><tbody>");
        int shown = 0;
        for (Map.Entry<String, DeadMessage> e : oldest.entrySet()) {
            if (shown++ == BLOCKED_SHOWN) {
                break;
            }
            DeadMessage d = e.getValue();
            h.raw("<tr><td class=\"key\">")
                    .text(d.message().key().orElse(""))
                    .raw("</td><td class=\"topic\">")
                    .text(d.message().topic())
                    .raw("</td><td class=\"time\">")
                    .text(Html.time(d.deadAt()))
                    .raw("</td><td class=\"n\">")
                    .text(Integer.toString(counts.getOrDefault(e.getKey(), 0)))
                    .raw("</td><td class=\"id\">");
            h.link(detailUrl(r, d), d.message().id());
            h.raw("</td></tr>");
        }
        if (oldest.isEmpty()) {
            h.raw("<tr><td colspan=\"5\" class=\"empty\">No keyed dead letter among the oldest ")
                    .text(Integer.toString(BLOCKED_SCAN))
                    .raw(".</td></tr>");
        }
        h.raw("</tbody></table>");
        if (oldest.size() > BLOCKED_SHOWN || page.next().isPresent()) {
            h.raw("<p class=\"summary\">The keys of the oldest dead letters; ");
            h.link(r.basePath() + "/dead-letters", "all dead letters");
            h.raw(".</p>");
        }
        h.raw("</section>");
    }

    private static void topicRow(
            Html h, Request r, String topic, TopicStatistics t, boolean total) {
        h.raw(total ? "<tr class=\"total\">" : "<tr>").raw("<td>").text(topic).raw("</td>");
        h.raw("<td class=\"n\">").text(Long.toString(t.ready())).raw("</td>");
        h.raw("<td class=\"n\">").text(Long.toString(t.delayed())).raw("</td>");
        h.raw("<td class=\"n\">").text(Long.toString(t.leased())).raw("</td>");
        h.raw("<td class=\"n\">");
        if (t.dead() > 0) {
            h.link(
                    Html.url(
                            r.basePath() + "/dead-letters",
                            total ? Map.of() : Map.of("topic", topic)),
                    Long.toString(t.dead()));
        } else {
            h.text("0");
        }
        h.raw("</td><td class=\"n\">")
                .text(t.ready() == 0 ? "–" : Html.age(t.oldestReadyAge()))
                .raw("</td></tr>");
    }

    // ---------------------------------------------------------------------------------------------
    // Dead letters

    /** The filter of the dead-letters page, as given and as parsed. */
    private record Filter(String topic, String from, String before, DeadLetterQuery query) {
        static Filter of(Map<String, List<String>> params) {
            String topic = first(params, "topic").strip();
            String from = first(params, "from").strip();
            String before = first(params, "before").strip();
            DeadLetterQuery q = DeadLetterQuery.all();
            if (!topic.isEmpty()) {
                if (topic.length() > 255) {
                    throw new Refusal(400, "A topic has at most 255 characters.");
                }
                q = q.topic(topic);
            }
            if (!from.isEmpty()) {
                q = q.deadFrom(instant(from, "from"));
            }
            if (!before.isEmpty()) {
                q = q.deadBefore(instant(before, "before"));
            }
            return new Filter(topic, from, before, q);
        }

        Map<String, String> params() {
            Map<String, String> p = new LinkedHashMap<>();
            p.put("topic", topic);
            p.put("from", from);
            p.put("before", before);
            return p;
        }

        boolean none() {
            return topic.isEmpty() && from.isEmpty() && before.isEmpty();
        }

        String describe() {
            if (none()) {
                return "every dead letter (no filter)";
            }
            List<String> parts = new ArrayList<>();
            if (!topic.isEmpty()) {
                parts.add("topic “" + topic + "”");
            }
            if (!from.isEmpty()) {
                parts.add("dead at or after " + Html.time(instant(from, "from")));
            }
            if (!before.isEmpty()) {
                parts.add("dead before " + Html.time(instant(before, "before")));
            }
            return "every dead letter with " + String.join(", ", parts);
        }
    }

    /** An ISO instant, or a {@code datetime-local} value read as UTC. */
    static Instant instant(String text, String name) {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            try {
                return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException e2) {
                throw new Refusal(
                        400,
                        "'"
                                + name
                                + "' must be a time like 2026-12-05T10:00:00 (UTC) or"
                                + " 2026-12-05T10:00:00Z, but was '"
                                + text
                                + "'.");
            }
        }
    }

    private String deadLetters(Request r, Caller caller) {
        Filter filter = Filter.of(r.query());
        String after = first(r.query(), "after");
        DeadLetterQuery q = filter.query().limit(pageSize);
        if (!after.isEmpty()) {
            q = q.after(after);
        }
        DeadLetterPage page = admin.deadLetters(q);
        Html h = new Html();
        notice(h, r);
        h.raw("<form method=\"get\" class=\"filter\"");
        h.attr("action", r.basePath() + "/dead-letters");
        h.raw("><label>Topic <input type=\"text\" name=\"topic\" maxlength=\"255\"");
        h.attr("value", filter.topic());
        h.raw(
                "></label><label>Dead from (UTC) <input type=\"datetime-local\" step=\"1\" name=\"from\"");
        h.attr("value", local(filter.from()));
        h.raw(
                "></label><label>Dead before (UTC) <input type=\"datetime-local\" step=\"1\" name=\"before\"");
        h.attr("value", local(filter.before()));
        h.raw("></label><button type=\"submit\">Filter</button> ");
        h.link(r.basePath() + "/dead-letters", "Clear");
        h.raw("</form>");

        boolean write = caller.canWrite();
        if (write) {
            h.raw("<form method=\"post\" id=\"dead-letter-actions\"");
            h.attr("action", r.basePath() + "/confirm");
            h.raw(">");
            h.hidden("csrf", guard.token(caller.user().orElseThrow()));
            r.formFields().forEach(h::hidden);
            filter.params().forEach(h::hidden);
        }
        h.raw("<table id=\"dead-letters\"><thead><tr>");
        if (write) {
            h.raw("<th class=\"select\">Select</th>");
        }
        h.raw("<th>Dead at</th><th>Topic</th><th>Key</th><th class=\"n\">Attempts</th>")
                .raw("<th>Reason / last error</th><th>Id</th></tr></thead><tbody>");
        for (DeadMessage d : page.items()) {
            Message m = d.message();
            h.raw("<tr>");
            if (write) {
                h.raw("<td class=\"select\"><input type=\"checkbox\" name=\"id\"");
                h.attr("value", m.id());
                h.attr("aria-label", "select " + m.id());
                h.raw("></td>");
            }
            h.raw("<td class=\"time\">").text(Html.time(d.deadAt())).raw("</td>");
            h.raw("<td class=\"topic\">").text(m.topic()).raw("</td>");
            h.raw("<td class=\"key\">").text(m.key().orElse("–")).raw("</td>");
            h.raw("<td class=\"n\">").text(Integer.toString(d.attempts())).raw("</td>");
            h.raw("<td class=\"reason\">").text(d.reason()).raw("</td>");
            h.raw("<td class=\"id\">");
            h.link(detailUrl(r, d), m.id());
            h.raw("</td></tr>");
        }
        if (page.items().isEmpty()) {
            h.raw("<tr><td colspan=\"")
                    .text(write ? "7" : "6")
                    .raw("\" class=\"empty\">No dead letter")
                    .text(filter.none() ? "." : " matches the filter.")
                    .raw("</td></tr>");
        }
        h.raw("</tbody></table>");
        h.raw("<p class=\"pager\">");
        if (!after.isEmpty()) {
            h.link(Html.url(r.basePath() + "/dead-letters", filter.params()), "First page");
            h.raw(" ");
        }
        if (page.next().isPresent()) {
            Map<String, String> p = filter.params();
            p.put("after", page.next().get());
            h.raw("<a id=\"next-page\"");
            h.attr("href", Html.url(r.basePath() + "/dead-letters", p));
            h.raw(">Next page</a>");
        }
        h.raw("</p>");
        if (write) {
            h.raw("<fieldset class=\"actions\"><legend>Selected</legend>")
                    .raw(
                            "<button type=\"submit\" name=\"op\" value=\"replay-selected\">Replay selected…</button>")
                    .raw(
                            "<button type=\"submit\" name=\"op\" value=\"discard-selected\" class=\"danger\">Discard selected…</button>")
                    .raw("</fieldset><fieldset class=\"actions\"><legend>")
                    .text(filter.none() ? "All dead letters" : "All matching the filter")
                    .raw("</legend>")
                    .raw(
                            "<button type=\"submit\" name=\"op\" value=\"replay-filter\">Replay all matching…</button>")
                    .raw(
                            "<button type=\"submit\" name=\"op\" value=\"discard-filter\" class=\"danger\">Discard all matching…</button>")
                    .raw("</fieldset></form>");
        }
        return h.toString();
    }

    /** A datetime-local input value for a filter time given either way. */
    private static String local(String given) {
        if (given.isEmpty()) {
            return "";
        }
        try {
            return LocalDateTime.ofInstant(instant(given, "time"), ZoneOffset.UTC).toString();
        } catch (Refusal e) {
            return "";
        }
    }

    private static String detailUrl(Request r, DeadMessage d) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("id", d.message().id());
        p.put("topic", d.message().topic());
        p.put("dead", d.deadAt().toString());
        return Html.url(r.basePath() + "/message", p);
    }

    private void notice(Html h, Request r) {
        String done = first(r.query(), "done");
        String count = first(r.query(), "count");
        if (!count.matches("\\d{1,9}")) {
            return;
        }
        String verb =
                switch (done) {
                    case "replay" -> "Replayed ";
                    case "discard" -> "Discarded ";
                    default -> "";
                };
        if (!verb.isEmpty()) {
            h.raw("<p class=\"notice\" id=\"notice\">")
                    .text(verb + count + " dead letter(s).")
                    .raw("</p>");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // One message

    private String message(Request r, Caller caller) {
        String id = first(r.query(), "id");
        String topic = first(r.query(), "topic");
        String dead = first(r.query(), "dead");
        if (id.isEmpty() || topic.isEmpty() || dead.isEmpty()) {
            throw new Refusal(400, "A dead letter is named by id, topic and dead time.");
        }
        Instant deadAt = instant(dead, "dead");
        DeadMessage found = find(id, topic, deadAt);
        Html h = new Html();
        if (found == null) {
            h.raw("<p class=\"empty\">")
                    .text(
                            "Message "
                                    + id
                                    + " is not a dead letter any more (replayed, discarded or published).")
                    .raw("</p>");
            return h.toString();
        }
        Message m = found.message();
        h.raw("<dl class=\"facts\" id=\"message\">");
        fact(h, "Id", m.id());
        fact(h, "Topic", m.topic());
        fact(h, "Key", m.key().orElse("–"));
        fact(h, "Attempts", Integer.toString(found.attempts()));
        fact(h, "Reason", found.reason());
        fact(h, "Last error", admin.lastError(m.id()).orElse("–"));
        fact(h, "Enqueued at", Html.time(found.enqueuedAt()));
        fact(h, "Dead at", Html.time(found.deadAt()));
        fact(h, "Occurred at", Html.time(m.occurredAt()));
        fact(h, "Module", m.module());
        fact(h, "Content type", m.contentType());
        fact(h, "Payload size", m.payloadSize() + " bytes");
        fact(
                h,
                "Header names",
                m.headers().isEmpty()
                        ? "–"
                        : String.join(", ", new TreeMap<>(m.headers()).keySet()));
        h.raw("</dl>");
        boolean show = first(r.query(), "payload").equals("1");
        if (caller.canSeePayloads()) {
            if (show) {
                h.raw("<section><h2>Headers</h2><table id=\"headers\"><tbody>");
                new TreeMap<>(m.headers())
                        .forEach(
                                (k, v) ->
                                        h.raw("<tr><th>")
                                                .text(k)
                                                .raw("</th><td>")
                                                .text(v)
                                                .raw("</td></tr>"));
                h.raw("</tbody></table><h2>Payload</h2><pre id=\"payload\">")
                        .text(payload(m.payload()))
                        .raw("</pre></section>");
            } else {
                Map<String, String> p = new LinkedHashMap<>();
                p.put("id", m.id());
                p.put("topic", m.topic());
                p.put("dead", found.deadAt().toString());
                p.put("payload", "1");
                h.raw("<p>");
                h.link(Html.url(r.basePath() + "/message", p), "Show payload and header values");
                h.raw("</p>");
            }
        } else {
            h.raw("<p class=\"muted\">Payload and header values are not shown")
                    .text(payloadsEnabled ? " to anonymous operators." : " in this deployment.")
                    .raw("</p>");
        }
        if (caller.canWrite()) {
            h.raw("<form method=\"post\" class=\"actions\"");
            h.attr("action", r.basePath() + "/confirm");
            h.raw(">");
            h.hidden("csrf", guard.token(caller.user().orElseThrow()));
            r.formFields().forEach(h::hidden);
            h.hidden("id", m.id());
            h.raw("<button type=\"submit\" name=\"op\" value=\"replay-selected\">Replay…</button>")
                    .raw(
                            "<button type=\"submit\" name=\"op\" value=\"discard-selected\" class=\"danger\">Discard…</button>")
                    .raw("</form>");
        }
        h.raw("<p>");
        h.link(
                Html.url(r.basePath() + "/dead-letters", Map.of("topic", m.topic())),
                "Back to the dead letters of this topic");
        h.raw("</p>");
        return h.toString();
    }

    private @Nullable DeadMessage find(String id, String topic, Instant deadAt) {
        DeadLetterQuery q;
        try {
            q =
                    DeadLetterQuery.all()
                            .topic(topic)
                            .deadFrom(deadAt)
                            .deadBefore(deadAt.plusMillis(1))
                            .limit(DeadLetterQuery.MAX_LIMIT);
        } catch (IllegalArgumentException e) {
            throw new Refusal(400, String.valueOf(e.getMessage()));
        }
        for (int pages = 0; pages < 100; pages++) {
            DeadLetterPage page = admin.deadLetters(q);
            for (DeadMessage d : page.items()) {
                if (d.message().id().equals(id)) {
                    return d;
                }
            }
            if (page.next().isEmpty()) {
                return null;
            }
            q = q.after(page.next().get());
        }
        return null;
    }

    private static void fact(Html h, String name, String value) {
        h.raw("<dt>").text(name).raw("</dt><dd>").text(value).raw("</dd>");
    }

    /** UTF-8 text as it is, anything else as Base64. */
    static String payload(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return "(binary, Base64) " + Base64.getEncoder().encodeToString(bytes);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Replay and discard

    /** A write action as posted: what to do, to which dead letters. */
    private record Action(String verb, boolean byFilter, List<String> ids, Filter filter) {
        /** The actions the pages' forms post, each as {@link #op()} names it. */
        private static final Set<String> OPS =
                Set.of("replay-selected", "discard-selected", "replay-filter", "discard-filter");

        static Action of(Map<String, List<String>> form) {
            String op = first(form, "op");
            if (!OPS.contains(op)) {
                throw new Refusal(400, "Unknown action.");
            }
            String verb = op.substring(0, op.indexOf('-'));
            boolean byFilter = op.endsWith("-filter");
            List<String> ids = List.copyOf(new LinkedHashSet<>(form.getOrDefault("id", List.of())));
            if (!byFilter && ids.isEmpty()) {
                throw new Refusal(400, "Select at least one dead letter.");
            }
            if (ids.size() > DeadLetterQuery.MAX_LIMIT) {
                throw new Refusal(
                        400,
                        "Select at most " + DeadLetterQuery.MAX_LIMIT + " dead letters at a time.");
            }
            return new Action(verb, byFilter, byFilter ? List.of() : ids, Filter.of(form));
        }

        String op() {
            return verb + (byFilter ? "-filter" : "-selected");
        }
    }

    private String confirm(Request r) {
        Action a = Action.of(r.form());
        Html h = new Html();
        String verb = a.verb().equals("replay") ? "Replay" : "Discard";
        h.raw("<div class=\"confirm\" id=\"confirmation\"><p>");
        if (a.byFilter()) {
            long count = count(a.filter().query());
            h.text(verb + " " + a.filter().describe() + ": ")
                    .raw("<strong id=\"count\">")
                    .text(count >= COUNT_LIMIT ? "more than " + COUNT_LIMIT : Long.toString(count))
                    .raw("</strong> now.");
        } else {
            h.text(verb + " ")
                    .raw("<strong id=\"count\">")
                    .text(Integer.toString(a.ids().size()))
                    .raw("</strong>")
                    .text(" selected dead letter(s):");
        }
        h.raw("</p>");
        if (!a.byFilter()) {
            h.raw("<ul class=\"ids\">");
            for (String id : a.ids().subList(0, Math.min(50, a.ids().size()))) {
                h.el("li", id);
            }
            if (a.ids().size() > 50) {
                h.el("li", "… and " + (a.ids().size() - 50) + " more");
            }
            h.raw("</ul>");
        }
        h.raw("<p>")
                .text(
                        a.verb().equals("replay")
                                ? "They become due at once with their attempts reset, and their keys are unblocked."
                                : "They are deleted for good, which unblocks their keys. This cannot be undone.")
                .raw("</p>");
        h.raw("<form method=\"post\"");
        h.attr("action", r.basePath() + "/apply");
        h.raw(">");
        h.hidden("csrf", first(r.form(), "csrf"));
        r.formFields().forEach(h::hidden);
        h.hidden("op", a.op());
        h.hidden("confirmed", "yes");
        for (String id : a.ids()) {
            h.hidden("id", id);
        }
        a.filter().params().forEach(h::hidden);
        h.raw("<button type=\"submit\" id=\"confirm\"")
                .raw(a.verb().equals("discard") ? " class=\"danger\"" : "")
                .raw(">")
                .text("Yes, " + a.verb())
                .raw("</button> ");
        h.link(Html.url(r.basePath() + "/dead-letters", a.filter().params()), "Cancel");
        h.raw("</form></div>");
        return h.toString();
    }

    private long count(DeadLetterQuery filter) {
        DeadLetterQuery q = filter.limit(DeadLetterQuery.MAX_LIMIT);
        long n = 0;
        while (n < COUNT_LIMIT) {
            DeadLetterPage page = admin.deadLetters(q);
            n += page.items().size();
            if (page.next().isEmpty()) {
                return n;
            }
            q = q.after(page.next().get());
        }
        return n;
    }

    private Response apply(Request r) {
        if (!first(r.form(), "confirmed").equals("yes")) {
            throw new Refusal(400, "A write needs its confirmation.");
        }
        Action a = Action.of(r.form());
        Instant now = clock.instant();
        int n;
        if (a.verb().equals("replay")) {
            n =
                    a.byFilter()
                            ? admin.replayAll(a.filter().query(), now)
                            : admin.replay(a.ids(), now);
        } else {
            n = a.byFilter() ? admin.discardAll(a.filter().query()) : admin.discard(a.ids());
        }
        Map<String, String> p = a.filter().params();
        p.put("done", a.verb());
        p.put("count", Integer.toString(n));
        return redirect(Html.url(r.basePath() + "/dead-letters", p));
    }

    // ---------------------------------------------------------------------------------------------
    // Responses

    private static String refusal(Request r, Refusal e) {
        Html h = new Html();
        h.raw("<p class=\"error\" id=\"refused\">")
                .text(String.valueOf(e.getMessage()))
                .raw("</p><p>");
        h.link(r.basePath() + "/", "Back to the overview");
        h.raw("</p>");
        return h.toString();
    }

    private Response page(int status, Request r, String heading, String body) {
        Html h = new Html();
        String base = r.basePath();
        h.raw("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
                .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .raw("<title>")
                .text(heading + " · " + title + " console")
                .raw("</title><link rel=\"stylesheet\"");
        h.attr("href", base + "/style.css");
        h.raw("></head><body><header><span class=\"brand\">")
                .text(title)
                .raw(" console</span><nav>");
        h.link(base + "/", "Overview");
        h.link(base + "/dead-letters", "Dead letters");
        h.raw("</nav></header><main><h1>").text(heading).raw("</h1>");
        h.raw(body);
        h.raw("</main></body></html>");
        Map<String, String> headers = headers("text/html; charset=utf-8");
        if (status == 405) {
            headers.put(
                    "Allow",
                    r.path().equals("/confirm") || r.path().equals("/apply")
                            ? "POST"
                            : "GET, HEAD");
        }
        return new Response(status, headers, h.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static Response redirect(String location) {
        Map<String, String> headers = headers("text/plain; charset=utf-8");
        headers.put("Location", location);
        return new Response(303, headers, "see other\n".getBytes(StandardCharsets.UTF_8));
    }

    static Map<String, String> headers(String contentType) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", contentType);
        h.put("Content-Security-Policy", CSP);
        h.put("X-Content-Type-Options", "nosniff");
        h.put("X-Frame-Options", "DENY");
        h.put("Referrer-Policy", "same-origin");
        h.put("Cache-Control", "no-store");
        return h;
    }

    static String first(Map<String, List<String>> params, String name) {
        List<String> values = params.get(name);
        return values == null || values.isEmpty() ? "" : values.get(0);
    }

    private static byte[] css() {
        try (InputStream in = Pages.class.getResourceAsStream("console.css")) {
            if (in == null) {
                throw new IllegalStateException("console.css is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
