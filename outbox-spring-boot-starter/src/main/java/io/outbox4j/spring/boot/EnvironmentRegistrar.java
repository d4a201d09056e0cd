package io.outbox4j.spring.boot;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;

/**
 * A registrar of the named outboxes' beans: it reads their {@code outbox4j.outboxes.*} settings
 * from the environment Spring gives it before it registers anything.
 */
abstract class EnvironmentRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {
    private @Nullable Environment environment;

    @Override
    public final void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    /** The environment; Spring sets it before it asks for the bean definitions. */
    final Environment environment() {
        return Objects.requireNonNull(environment, "environment");
    }
}
