package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The admin kit against the reference store, run through the JUnit Platform, and its shape. */
class ReferenceAdminKitTest {
    /** The admin kit has at least this many rules; a rule lost by accident fails this count. */
    static final int MINIMUM_RULES = 20;

    /** The README's example: the admin kit against the reference store. */
    static final String README_EXAMPLE = "io.outbox4j.tck.example.MyAdminContractTest";

    @Test
    @DisplayName("every admin rule passes on the reference in-memory store and none is skipped")
    void everyRulePassesOnTheReferenceStore() {
        KitReport report = KitReport.of(README_EXAMPLE);
        assertThat(report.failed()).as("admin rules failing on the reference store").isEmpty();
        assertThat(report.skipped()).as("admin rules skipped on the reference store").isEmpty();
        assertThat(report.failedContainers).isZero();
        assertThat(report.passed()).hasSizeGreaterThanOrEqualTo(MINIMUM_RULES);
    }

    @Test
    @DisplayName("every admin rule is named required_ and has a sentence as display name")
    void rulesAreNamedAndDescribed() {
        assertThat(KitReport.of(README_EXAMPLE).outcomes.values())
                .allSatisfy(
                        o -> {
                            assertThat(o.rule()).matches("required_[a-z][A-Za-z]+");
                            assertThat(o.displayName())
                                    .as("display name of %s", o.rule())
                                    .doesNotEndWith("()")
                                    .contains(" ");
                        });
    }

    @Test
    @DisplayName(
            "admin rules and rule groups are package-private, so a subclass cannot override one")
    void rulesCannotBeOverridden() {
        List<Method> rules = new ArrayList<>();
        for (Class<?> group : OutboxAdminContract.class.getDeclaredClasses()) {
            if (group.isAnnotationPresent(Nested.class)) {
                assertThat(
                                Modifier.isPublic(group.getModifiers())
                                        || Modifier.isProtected(group.getModifiers()))
                        .as("rule group %s must be package-private", group.getSimpleName())
                        .isFalse();
                for (Method m : KitReport.methodsOf(group)) {
                    if (m.isAnnotationPresent(Test.class)) {
                        rules.add(m);
                    }
                }
            }
        }
        assertThat(rules).hasSizeGreaterThanOrEqualTo(MINIMUM_RULES);
        assertThat(rules)
                .allSatisfy(
                        m ->
                                assertThat(
                                                m.getModifiers()
                                                        & (Modifier.PUBLIC | Modifier.PROTECTED))
                                        .as("rule %s must be package-private", m.getName())
                                        .isZero());
    }
}
