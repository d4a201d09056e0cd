package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * Runs a concrete kit subclass through the JUnit Platform (junit-platform-testkit) and records, per
 * rule (test method name), whether it passed, failed or was skipped, and the failure or skip
 * message.
 */
final class KitReport {
    private static final Map<String, KitReport> CACHE = new ConcurrentHashMap<>();

    /** The outcome of one rule. */
    record Outcome(
            String rule, String displayName, TestExecutionResult.Status status, String message) {}

    final Map<String, Outcome> outcomes = new TreeMap<>();
    final int failedContainers;

    private KitReport(EngineExecutionResults results) {
        for (Event e : results.testEvents().finished().list()) {
            TestExecutionResult r = e.getRequiredPayload(TestExecutionResult.class);
            String rule =
                    e.getTestDescriptor()
                            .getSource()
                            .filter(MethodSource.class::isInstance)
                            .map(s -> ((MethodSource) s).getMethodName())
                            .orElse(e.getTestDescriptor().getUniqueId().toString());
            String message = r.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("");
            Outcome previous =
                    outcomes.put(
                            rule,
                            new Outcome(
                                    rule,
                                    e.getTestDescriptor().getDisplayName(),
                                    r.getStatus(),
                                    message));
            if (previous != null) {
                throw new IllegalStateException("two rules share the method name " + rule);
            }
        }
        failedContainers = (int) results.containerEvents().failed().count();
    }

    /**
     * One row of a self-test's table of defects: what the broken store does wrong, the kit over it,
     * and each rule it must fail followed by a phrase of that rule's message.
     */
    static Arguments defect(String does, Class<?> kit, String... ruleThenPhrase) {
        Map<String, String> rules = new LinkedHashMap<>();
        for (int i = 0; i < ruleThenPhrase.length; i += 2) {
            rules.put(ruleThenPhrase[i], ruleThenPhrase[i + 1]);
        }
        return Arguments.of(does, kit, rules);
    }

    /** Runs the kit subclass (of either store kit) once per JVM and returns its report. */
    static KitReport of(Class<?> kit) {
        return of(kit.getName());
    }

    /**
     * Runs the named kit subclass (it may be package-private elsewhere) once per JVM and returns
     * its report.
     */
    static KitReport of(String className) {
        return CACHE.computeIfAbsent(
                className,
                name ->
                        new KitReport(
                                EngineTestKit.engine("junit-jupiter")
                                        .selectors(selectClass(name))
                                        .execute()));
    }

    /** Runs any test class (uncached); used for the publisher kit. */
    static KitReport run(Class<?> testClass) {
        return new KitReport(
                EngineTestKit.engine("junit-jupiter").selectors(selectClass(testClass)).execute());
    }

    /**
     * The rules of a kit: the {@code @Test} methods its {@code @Nested} groups declare or inherit
     * (a group extends the package-private class that holds its rules).
     */
    static List<Method> rulesOf(Class<?> kit) {
        List<Method> rules = new ArrayList<>();
        for (Class<?> group : kit.getDeclaredClasses()) {
            if (group.isAnnotationPresent(Nested.class)) {
                for (Class<?> c = group; c != null && c != Object.class; c = c.getSuperclass()) {
                    for (Method m : c.getDeclaredMethods()) {
                        if (m.isAnnotationPresent(Test.class)) {
                            rules.add(m);
                        }
                    }
                }
            }
        }
        return rules;
    }

    /**
     * Checks that the kit's rule groups and rules are package-private, so a subclass can neither
     * override nor hide one, and that it has at least {@code minimum} rules.
     */
    static void assertRulesCannotBeOverridden(Class<?> kit, int minimum) {
        for (Class<?> group : kit.getDeclaredClasses()) {
            if (group.isAnnotationPresent(Nested.class)) {
                assertThat(
                                Modifier.isPublic(group.getModifiers())
                                        || Modifier.isProtected(group.getModifiers()))
                        .as("rule group %s must be package-private", group.getSimpleName())
                        .isFalse();
            }
        }
        List<Method> rules = rulesOf(kit);
        assertThat(rules).hasSizeGreaterThanOrEqualTo(minimum);
        assertThat(rules)
                .allSatisfy(
                        m ->
                                assertThat(
                                                m.getModifiers()
                                                        & (Modifier.PUBLIC | Modifier.PROTECTED))
                                        .as("rule %s must be package-private", m.getName())
                                        .isZero());
    }

    /**
     * Checks that every rule of the kit passed on the reference store, none skipped and no group
     * failed, and that it has at least {@code minimum} rules.
     */
    void assertEveryRulePasses(String kit, int minimum) {
        assertThat(failed()).as("%s rules failing", kit).isEmpty();
        assertThat(skipped()).as("%s rules skipped", kit).isEmpty();
        assertThat(failedContainers).isZero();
        assertThat(passed()).hasSizeGreaterThanOrEqualTo(minimum);
    }

    /** Checks that every rule's name matches the pattern and its display name is a sentence. */
    void assertRulesNamedAndDescribed(String namePattern) {
        assertThat(outcomes.values())
                .allSatisfy(
                        o -> {
                            assertThat(o.rule()).matches(namePattern);
                            assertThat(o.displayName())
                                    .as("display name of %s", o.rule())
                                    .doesNotEndWith("()")
                                    .contains(" ");
                        });
    }

    Map<String, Outcome> withStatus(TestExecutionResult.Status status) {
        Map<String, Outcome> out = new TreeMap<>();
        outcomes.forEach(
                (rule, o) -> {
                    if (o.status() == status) {
                        out.put(rule, o);
                    }
                });
        return out;
    }

    Map<String, Outcome> failed() {
        return withStatus(TestExecutionResult.Status.FAILED);
    }

    Map<String, Outcome> passed() {
        return withStatus(TestExecutionResult.Status.SUCCESSFUL);
    }

    Map<String, Outcome> skipped() {
        return withStatus(TestExecutionResult.Status.ABORTED);
    }
}
