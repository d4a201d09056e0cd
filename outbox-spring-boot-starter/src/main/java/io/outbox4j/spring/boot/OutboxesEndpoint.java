package io.outbox4j.spring.boot;

import io.outbox4j.api.Incubating;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

/**
 * The {@code outbox} Actuator endpoint of an application with named outboxes ({@code
 * outbox4j.outboxes.<name>.*}): the operations of {@link OutboxEndpoint}, one level down, by outbox
 * name.
 *
 * <ul>
 *   <li>{@code GET /actuator/outbox}: every outbox's counts, by name;
 *   <li>{@code GET /actuator/outbox/<name>}: one outbox's counts;
 *   <li>{@code GET /actuator/outbox/<name>/dead-letters?topic=&limit=&after=}: one page of its dead
 *       letters;
 *   <li>{@code POST /actuator/outbox/<name>/replay} or {@code /discard} with {@code {"ids":
 *       "id1,id2"}} or {@code {"all": "true"}}.
 * </ul>
 *
 * An unknown name answers 404 with {@code {"error": "…"}} listing the outboxes.
 *
 * <p>New in 0.2 and may still change before 1.0 (CHANGELOG.md, "API stability").
 */
@WebEndpoint(id = "outbox")
@Incubating
public class OutboxesEndpoint {
    private final Map<String, OutboxEndpoint> outboxes;

    /**
     * Creates the endpoint.
     *
     * @param outboxes each outbox's endpoint, by name, in the order they are listed
     */
    public OutboxesEndpoint(Map<String, OutboxEndpoint> outboxes) {
        this.outboxes = new LinkedHashMap<>(outboxes);
    }

    static OutboxesEndpoint of(NamedOutboxes named, Clock clock) {
        Map<String, OutboxEndpoint> endpoints = new LinkedHashMap<>();
        for (String name : named.names()) {
            endpoints.put(name, new OutboxEndpoint(named.admin(name), clock));
        }
        return new OutboxesEndpoint(endpoints);
    }

    /**
     * Every outbox's counts; an outbox whose store cannot be read shows its {@code error}.
     *
     * @return the counts by outbox name
     */
    @ReadOperation
    public Map<String, Object> statistics() {
        Map<String, Object> all = new LinkedHashMap<>();
        outboxes.forEach(
                (name, endpoint) -> {
                    try {
                        all.put(name, endpoint.statistics());
                    } catch (RuntimeException e) {
                        all.put(name, Map.of("error", String.valueOf(e.getMessage())));
                    }
                });
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("outboxes", all);
        return out;
    }

    /**
     * One outbox's counts.
     *
     * @param name the outbox
     * @return its counts, as {@link OutboxEndpoint#statistics()}; 404 for an unknown name
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> outbox(@Selector String name) {
        OutboxEndpoint endpoint = outboxes.get(name);
        return endpoint == null ? unknown(name) : new WebEndpointResponse<>(endpoint.statistics());
    }

    /**
     * One page of an outbox's dead letters.
     *
     * @param name the outbox
     * @param section {@code dead-letters}
     * @param topic only this topic, if given
     * @param limit the page size
     * @param after the cursor of the previous page
     * @return as {@link OutboxEndpoint#deadLetters}; 404 for an unknown name
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> deadLetters(
            @Selector String name,
            @Selector String section,
            @Nullable String topic,
            @Nullable Integer limit,
            @Nullable String after) {
        OutboxEndpoint endpoint = outboxes.get(name);
        return endpoint == null
                ? unknown(name)
                : endpoint.deadLetters(section, topic, limit, after);
    }

    /**
     * Replays or discards an outbox's dead letters.
     *
     * @param name the outbox
     * @param action {@code replay} or {@code discard}
     * @param ids the dead letters, by message id, separated by commas
     * @param all {@code true} to act on every dead letter selected by {@code topic}
     * @param topic with {@code all}: only this topic
     * @return as {@link OutboxEndpoint#act}; 404 for an unknown name
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> act(
            @Selector String name,
            @Selector String action,
            @Nullable String ids,
            @Nullable Boolean all,
            @Nullable String topic) {
        OutboxEndpoint endpoint = outboxes.get(name);
        return endpoint == null ? unknown(name) : endpoint.act(action, ids, all, topic);
    }

    private WebEndpointResponse<Map<String, Object>> unknown(String name) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(
                "error",
                "no outbox is named '" + name + "'; the outboxes are " + outboxes.keySet());
        return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_NOT_FOUND);
    }
}
