package io.outbox4j.spring.boot;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Which of the two shapes the application has: one outbox, or named ones. */
final class OutboxConditions {
    private OutboxConditions() {}

    /** No {@code outbox4j.outboxes.<name>} is given: the one outbox of {@code outbox4j.store.*}. */
    static final class Single extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(
                ConditionContext context, AnnotatedTypeMetadata metadata) {
            return NamedOutboxes.bind(context.getEnvironment()).isEmpty()
                    ? ConditionOutcome.match("no outbox4j.outboxes are named")
                    : ConditionOutcome.noMatch("outbox4j.outboxes are named");
        }
    }

    /**
     * Some {@code outbox4j.outboxes.<name>} is given (and outbox4j is not turned off with {@code
     * outbox4j.enabled=false}).
     */
    static final class Named extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(
                ConditionContext context, AnnotatedTypeMetadata metadata) {
            if (!context.getEnvironment()
                    .getProperty(OutboxProperties.PREFIX + ".enabled", Boolean.class, true)) {
                return ConditionOutcome.noMatch("outbox4j.enabled is false");
            }
            var named = NamedOutboxes.bind(context.getEnvironment());
            return named.isEmpty()
                    ? ConditionOutcome.noMatch("no outbox4j.outboxes are named")
                    : ConditionOutcome.match("outbox4j.outboxes are named: " + named.keySet());
        }
    }
}
