package io.outbox4j.spring.boot;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Member;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

/**
 * The {@code outbox} Actuator endpoint, over the store's {@link OutboxAdmin} port:
 *
 * <ul>
 *   <li>{@code GET /actuator/outbox}: counts by state, in total and per topic, and blocked keys;
 *   <li>{@code GET /actuator/outbox/dead-letters?topic=&limit=&after=}: one page of dead letters
 *       (no payload, no header values), newest page cursor in {@code next};
 *   <li>{@code POST /actuator/outbox/replay} or {@code /discard} with {@code {"ids": "id1,id2"}}
 *       (comma-separated: Actuator request bodies hold plain values), or with {@code {"all":
 *       "true"}} (optionally {@code "topic"}) for every dead letter selected.
 * </ul>
 *
 * A bad request answers 400 and an unknown section or action 404, each with {@code {"error": "…"}}
 * saying what was wrong and what was given; a replay or discard whose ids name no dead letter
 * answers 404 (the CLI exits 3), one where only some do answers 200 with the count and an {@code
 * error} naming how many were not found.
 *
 * <p>A web endpoint (HTTP only: its answers carry status codes). Like every endpoint but health, it
 * is exposed only when the application lists it in {@code
 * management.endpoints.web.exposure.include}; secure it as its other endpoints are.
 */
@WebEndpoint(id = "outbox")
public class OutboxEndpoint {
    private final OutboxAdmin admin;
    private final Clock clock;

    /**
     * Creates the endpoint.
     *
     * @param admin the store's operator port
     * @param clock the clock replays are stamped with
     */
    public OutboxEndpoint(OutboxAdmin admin, Clock clock) {
        this.admin = admin;
        this.clock = clock;
    }

    /**
     * The outbox counted by state.
     *
     * @return the counts, in total and per topic
     */
    @ReadOperation
    public Map<String, Object> statistics() {
        OutboxStatistics s = admin.statistics(clock.instant());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", s.at().toString());
        out.put("total", counts(s.total()));
        Map<String, Object> topics = new LinkedHashMap<>();
        s.byTopic().entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(e -> topics.put(e.getKey(), counts(e.getValue())));
        out.put("topics", topics);
        out.put("blockedKeys", s.blockedKeys());
        if (admin instanceof OutboxMembership membership) {
            List<Map<String, Object>> members = new ArrayList<>();
            for (Member m : membership.members()) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("id", m.id());
                one.put("live", m.live());
                one.put("buckets", m.buckets());
                one.put("leaseUntil", m.leaseUntil().toString());
                members.add(one);
            }
            out.put("members", members);
        }
        return out;
    }

    /**
     * One page of dead letters.
     *
     * @param section {@code dead-letters}
     * @param topic only this topic, if given
     * @param limit the page size (default {@value DeadLetterQuery#DEFAULT_LIMIT})
     * @param after the cursor of the previous page
     * @return the page: {@code items} and, if there may be more, {@code next}
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> deadLetters(
            @Selector String section,
            @Nullable String topic,
            @Nullable Integer limit,
            @Nullable String after) {
        if (!section.equals("dead-letters")) {
            return error(
                    WebEndpointResponse.STATUS_NOT_FOUND,
                    "unknown section '" + section + "'; try dead-letters");
        }
        DeadLetterQuery q = DeadLetterQuery.all();
        try {
            if (topic != null) {
                q = q.topic(topic);
            }
            if (limit != null) {
                q = q.limit(limit);
            }
            if (after != null) {
                q = q.after(after);
            }
        } catch (IllegalArgumentException e) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, String.valueOf(e.getMessage()));
        }
        DeadLetterPage page = admin.deadLetters(q);
        List<Map<String, Object>> items = new ArrayList<>();
        for (DeadMessage d : page.items()) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("id", d.message().id());
            item.put("topic", d.message().topic());
            d.message().key().ifPresent(k -> item.put("key", k));
            item.put("module", d.message().module());
            item.put("contentType", d.message().contentType());
            item.put("payloadBytes", d.message().payloadSize());
            item.put("attempts", d.attempts());
            item.put("reason", d.reason());
            item.put("enqueuedAt", d.enqueuedAt().toString());
            item.put("deadAt", d.deadAt().toString());
            items.add(item);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("items", items);
        page.next().ifPresent(n -> out.put("next", n));
        return new WebEndpointResponse<>(out);
    }

    /**
     * Replays (due again now) or discards (deletes) dead letters.
     *
     * @param action {@code replay} or {@code discard}
     * @param ids the dead letters, by message id, separated by commas
     * @param all {@code true} to act on every dead letter selected by {@code topic} instead of ids
     * @param topic with {@code all}: only this topic
     * @return how many were replayed or discarded; 400 with {@code error} for a bad request, 404
     *     when none of the ids named a dead letter (the CLI's exit code 3)
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> act(
            @Selector String action,
            @Nullable String ids,
            @Nullable Boolean all,
            @Nullable String topic) {
        boolean replay;
        if (action.equals("replay")) {
            replay = true;
        } else if (action.equals("discard")) {
            replay = false;
        } else {
            return error(
                    WebEndpointResponse.STATUS_NOT_FOUND,
                    "unknown action '" + action + "'; use replay or discard");
        }
        boolean every = Boolean.TRUE.equals(all);
        List<String> given = new ArrayList<>();
        if (ids != null) {
            for (String id : ids.split(",", -1)) {
                if (!id.isBlank()) {
                    given.add(id.strip());
                }
            }
        }
        if (given.isEmpty() == !every) {
            return error(
                    WebEndpointResponse.STATUS_BAD_REQUEST,
                    "give either ids (message ids separated by commas) or all=true, not both and not"
                            + " neither, but got ids="
                            + (ids == null ? "none" : "'" + ids + "'")
                            + " and all="
                            + all);
        }
        Instant now = clock.instant();
        int count;
        try {
            if (every) {
                DeadLetterQuery filter =
                        topic == null ? DeadLetterQuery.all() : DeadLetterQuery.all().topic(topic);
                count = replay ? admin.replayAll(filter, now) : admin.discardAll(filter);
            } else {
                if (given.size() > DeadLetterQuery.MAX_LIMIT) {
                    throw new IllegalArgumentException(
                            "at most "
                                    + DeadLetterQuery.MAX_LIMIT
                                    + " ids per call, but got "
                                    + given.size());
                }
                count = replay ? admin.replay(given, now) : admin.discard(given);
            }
        } catch (IllegalArgumentException e) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, String.valueOf(e.getMessage()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(replay ? "replayed" : "discarded", count);
        if (!every && count < given.size()) {
            out.put(
                    "error",
                    (given.size() - count)
                            + " of the "
                            + given.size()
                            + " ids named no dead letter (unknown, or not dead: waiting, in flight,"
                            + " published, or already replayed or discarded)");
            if (count == 0) {
                return new WebEndpointResponse<>(out, WebEndpointResponse.STATUS_NOT_FOUND);
            }
        }
        return new WebEndpointResponse<>(out);
    }

    /** A response with an {@code error} that says what was wrong with the request. */
    private static WebEndpointResponse<Map<String, Object>> error(int status, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        return new WebEndpointResponse<>(body, status);
    }

    private static Map<String, Object> counts(TopicStatistics t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ready", t.ready());
        m.put("delayed", t.delayed());
        m.put("leased", t.leased());
        m.put("dead", t.dead());
        m.put("oldestReadyAge", t.oldestReadyAge().toString());
        return m;
    }
}
