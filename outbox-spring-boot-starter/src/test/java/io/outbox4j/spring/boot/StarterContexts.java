package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

/** What the starter's tests over Boot's {@link ApplicationContextRunner} share. */
public final class StarterContexts {
    private StarterContexts() {}

    /**
     * A context over a fresh in-memory H2 database: Boot's DataSource, transaction manager and
     * template, the outbox's and the relay's auto-configuration, and {@code more}. The schema is
     * the test's to ask for (one outbox's or the named outboxes' create-schema).
     *
     * @param more further auto-configurations (health, metrics, Modulith...)
     * @return the runner
     */
    public static ApplicationContextRunner onH2(Class<?>... more) {
        List<Class<?>> configurations =
                Stream.concat(
                                Stream.of(
                                        DataSourceAutoConfiguration.class,
                                        DataSourceTransactionManagerAutoConfiguration.class,
                                        TransactionAutoConfiguration.class,
                                        OutboxAutoConfiguration.class,
                                        OutboxRelayAutoConfiguration.class),
                                Stream.of(more))
                        .toList();
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(configurations.toArray(Class<?>[]::new)))
                .withPropertyValues(
                        "spring.datasource.url=jdbc:h2:mem:"
                                + UUID.randomUUID()
                                + ";DB_CLOSE_DELAY=-1");
    }

    /**
     * The first of a failed start's causes (the failure itself included) that is a {@code type};
     * fails the test when none is.
     *
     * @param failure the context's startup failure
     * @param type the cause looked for
     * @param <T> its type
     * @return the cause
     */
    public static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        throw new AssertionError(
                "the start did not fail with a " + type.getSimpleName() + ": " + failure, failure);
    }

    /**
     * The property a failed start names; fails the test when it names none.
     *
     * @param context the context that did not start
     * @return Boot's report of the property
     */
    public static InvalidConfigurationPropertyValueException invalidProperty(
            AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        return cause(context.getStartupFailure(), InvalidConfigurationPropertyValueException.class);
    }

    /**
     * Asserts that the start failed on {@code property} for a reason that says {@code reason}.
     *
     * @param context the context
     * @param property the property Boot's report names
     * @param reason a part of the reason it gives
     */
    public static void assertRefused(
            AssertableApplicationContext context, String property, String reason) {
        InvalidConfigurationPropertyValueException invalid = invalidProperty(context);
        assertThat(invalid.getName()).isEqualTo(property);
        assertThat(invalid.getReason()).contains(reason);
    }

    /**
     * Asserts that the start failed on {@code property} for exactly {@code reason}.
     *
     * @param context the context
     * @param property the property Boot's report names
     * @param reason the whole reason it gives
     * @return Boot's report, for the value
     */
    public static InvalidConfigurationPropertyValueException assertRefusedExactly(
            AssertableApplicationContext context, String property, String reason) {
        InvalidConfigurationPropertyValueException invalid = invalidProperty(context);
        assertThat(invalid.getName()).isEqualTo(property);
        assertThat(invalid.getReason()).isEqualTo(reason);
        return invalid;
    }
}
