package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The kit against the reference store, run through the JUnit Platform, and the kit's own shape. */
class ReferenceStoreKitTest {
    /** The kit has at least this many rules; a rule lost by accident fails this count. */
    static final int MINIMUM_RULES = 37;

    /**
     * The README's example: the kit against the reference store, subclassed from another package.
     */
    static final String README_EXAMPLE = "io.outbox4j.tck.example.MyStoreContractTest";

    /**
     * A store that cannot do transactions and cannot keep 1 MiB payloads: those rules must skip
     * with the reason.
     */
    static class WithoutTransactionsOrLargePayloads extends BrokenStoreContract {
        @Override
        protected Optional<String> transactionsUnsupported() {
            return Optional.of("the test server has no multi-document transactions");
        }

        @Override
        protected Optional<String> largePayloadUnsupported() {
            return Optional.of("items are capped at 400 KB");
        }
    }

    @Test
    @DisplayName("every rule passes on the reference in-memory store and none is skipped")
    void everyRulePassesOnTheReferenceStore() {
        KitReport report = KitReport.of(README_EXAMPLE);
        assertThat(report.failed()).as("rules failing on the reference store").isEmpty();
        assertThat(report.skipped()).as("rules skipped on the reference store").isEmpty();
        assertThat(report.failedContainers).isZero();
        assertThat(report.passed()).hasSizeGreaterThanOrEqualTo(MINIMUM_RULES);
    }

    @Test
    @DisplayName("every rule is named required_ or optional_ and has a sentence as display name")
    void rulesAreNamedAndDescribed() {
        KitReport report = KitReport.of(README_EXAMPLE);
        assertThat(report.outcomes.values())
                .allSatisfy(
                        o -> {
                            assertThat(o.rule()).matches("(required|optional)_[a-z][A-Za-z]+");
                            assertThat(o.displayName())
                                    .as("display name of %s", o.rule())
                                    .doesNotEndWith("()")
                                    .contains(" ");
                        });
    }

    @Test
    @DisplayName(
            "rules and rule groups are package-private, so a subclass cannot override or hide one")
    void rulesCannotBeOverridden() {
        List<Method> rules = new ArrayList<>();
        for (Class<?> group : OutboxStoreContract.class.getDeclaredClasses()) {
            if (group.isAnnotationPresent(Nested.class)) {
                assertThat(
                                Modifier.isPublic(group.getModifiers())
                                        || Modifier.isProtected(group.getModifiers()))
                        .as("rule group %s must be package-private", group.getSimpleName())
                        .isFalse();
                for (Method m : group.getDeclaredMethods()) {
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

    @Test
    @DisplayName(
            "rules a store cannot support are skipped with the reason its knob gives, never passed")
    void unsupportedCapabilitiesSkipWithTheReason() {
        KitReport report = KitReport.of(WithoutTransactionsOrLargePayloads.class);
        assertThat(report.skipped().keySet())
                .containsExactlyInAnyOrder(
                        "required_rolledBackEnqueueIsNeverClaimable",
                        "required_rejectedBatchLeavesNothingBehind",
                        "optional_payloadOfTheDefaultLimitRoundTrips");
        assertThat(report.skipped().get("required_rolledBackEnqueueIsNeverClaimable").message())
                .contains(
                        "transactionsUnsupported() says the test server has no multi-document transactions");
        assertThat(report.skipped().get("optional_payloadOfTheDefaultLimitRoundTrips").message())
                .contains("largePayloadUnsupported() says items are capped at 400 KB");
        assertThat(report.failed()).isEmpty();
    }
}
