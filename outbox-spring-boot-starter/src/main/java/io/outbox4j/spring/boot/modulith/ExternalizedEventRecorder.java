package io.outbox4j.spring.boot.modulith;

import io.outbox4j.api.Message;
import io.outbox4j.spring.boot.TransactionalOutbox;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;

/**
 * Enqueues each event that Spring Modulith's {@link EventExternalizationConfiguration} selects, in
 * the transaction that publishes it: the event's routing target becomes the topic, its routing key
 * the message key (SpEL expressions such as {@code @Externalized("orders::#{customerId()}")} are
 * evaluated on the event, as Modulith's own externalizers do), its headers the message headers, and
 * a random UUID the message id. It is a plain synchronous listener, so it runs inside {@code
 * publishEvent}, before the transaction commits; an event published outside a transaction fails
 * like any enqueue outside one.
 */
final class ExternalizedEventRecorder implements ApplicationListener<PayloadApplicationEvent<?>> {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();

    private final EventExternalizationConfiguration configuration;
    private final TransactionalOutbox outbox;
    private final ExternalizedEventSerializer serializer;
    private final EvaluationContext evaluation;
    private final String module;

    ExternalizedEventRecorder(
            EventExternalizationConfiguration configuration,
            TransactionalOutbox outbox,
            ExternalizedEventSerializer serializer,
            EvaluationContext evaluation,
            String module) {
        this.configuration = configuration;
        this.outbox = outbox;
        this.serializer = serializer;
        this.evaluation = evaluation;
        this.module = module;
    }

    @Override
    public void onApplicationEvent(PayloadApplicationEvent<?> event) {
        Object payload = event.getPayload();
        if (!configuration.supports(payload)) {
            return;
        }
        RoutingTarget target = configuration.determineTarget(payload);
        String topic = evaluate(target.getTarget(), payload);
        String key = target.getKey() == null ? null : evaluate(target.getKey(), payload);
        if (topic == null) {
            throw new IllegalStateException(
                    "outbox4j: the routing target '"
                            + target.getTarget()
                            + "' of "
                            + payload.getClass().getName()
                            + " evaluated to null");
        }
        Object mapped = configuration.map(payload);
        Message.Builder b =
                Message.builder()
                        .id(UUID.randomUUID().toString())
                        .topic(topic)
                        .key(key)
                        .module(module);
        configuration
                .getHeadersFor(payload)
                .forEach(
                        (name, value) -> {
                            if (value != null) {
                                b.header(name, String.valueOf(value));
                            }
                        });
        serializer.serialize(mapped, b);
        outbox.enqueue(b.build());
    }

    /** A plain value as it is; {@code #{...}} parts evaluated with the event as root object. */
    private @Nullable String evaluate(String value, Object event) {
        if (!value.contains("#{")) {
            return value;
        }
        Object result = PARSER.parseExpression(value, TEMPLATE).getValue(evaluation, event);
        return result == null ? null : result.toString();
    }

    @Override
    public boolean supportsAsyncExecution() {
        // It must run in the publishing thread, inside the publishing transaction.
        return false;
    }
}
