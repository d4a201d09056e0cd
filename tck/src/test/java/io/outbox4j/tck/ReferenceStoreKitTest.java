package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The kit against the reference store, run through the JUnit Platform, and the kit's own shape. */
class ReferenceStoreKitTest {
    /** The kit has at least this many rules; a rule lost by accident fails this count. */
    static final int MINIMUM_RULES = 68;

    /**
     * The README's example: the kit against the reference store, subclassed from another package.
     */
    static final String README_EXAMPLE = "io.outbox4j.tck.example.MyStoreContractTest";

    /**
     * A store with every capability knob off and no optional factory: the rules those enable must
     * skip with the reason, never pass and never fail.
     */
    static class EveryKnobOff extends BrokenStoreContract {
        @Override
        protected Optional<String> transactionsUnsupported() {
            return Optional.of("the test server has no multi-document transactions");
        }

        @Override
        protected Optional<String> largePayloadUnsupported() {
            return Optional.of("items are capped at 400 KB");
        }

        @Override
        protected Optional<OutboxAdmin> admin() {
            return Optional.empty();
        }

        @Override
        protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
            return Optional.empty();
        }

        @Override
        protected void enqueueCommittingDespiteFailure(List<Message> messages) {
            throw OutboxStoreContract.NotSupplied.COMMITTING_DESPITE_FAILURE.get();
        }

        /** A store without an admin port reads the reason itself. */
        @Override
        protected Optional<String> deadLetterReason(String messageId) {
            return reference.deadLetterReason(messageId);
        }
    }

    /** Transactions work, but the factory for the committing caller is not supplied. */
    static class WithoutTheCommittingFactory extends BrokenStoreContract {
        @Override
        protected void enqueueCommittingDespiteFailure(List<Message> messages) {
            throw OutboxStoreContract.NotSupplied.COMMITTING_DESPITE_FAILURE.get();
        }
    }

    @Test
    @DisplayName("every rule passes on the reference in-memory store and none is skipped")
    void everyRulePassesOnTheReferenceStore() {
        KitReport.of(README_EXAMPLE).assertEveryRulePasses("store", MINIMUM_RULES);
    }

    @Test
    @DisplayName("every rule is named required_ or optional_ and has a sentence as display name")
    void rulesAreNamedAndDescribed() {
        KitReport.of(README_EXAMPLE)
                .assertRulesNamedAndDescribed("(required|optional)_[a-z][A-Za-z]+");
    }

    @Test
    @DisplayName(
            "rules and rule groups are package-private, so a subclass cannot override or hide one")
    void rulesCannotBeOverridden() {
        KitReport.assertRulesCannotBeOverridden(OutboxStoreContract.class, MINIMUM_RULES);
    }

    @Test
    @DisplayName(
            "rules a store cannot support are skipped with a message naming the knob, never passed")
    void unsupportedCapabilitiesSkipWithTheReason() {
        KitReport report = KitReport.of(EveryKnobOff.class);
        assertThat(report.skipped().keySet())
                .containsExactlyInAnyOrder(
                        "optional_rolledBackEnqueueIsNeverClaimable",
                        "optional_rejectedBatchLeavesNothingBehind",
                        "optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind",
                        "optional_payloadOfTheDefaultLimitRoundTrips",
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        "optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo");
        Map<String, KitReport.Outcome> skipped = report.skipped();
        assertThat(skipped.get("optional_rolledBackEnqueueIsNeverClaimable").message())
                .contains(
                        "transactionsUnsupported() says the test server has no multi-document transactions");
        assertThat(
                        skipped.get("optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind")
                                .message())
                .contains("transactionsUnsupported()");
        assertThat(skipped.get("optional_payloadOfTheDefaultLimitRoundTrips").message())
                .contains("largePayloadUnsupported() says items are capped at 400 KB");
        assertThat(skipped.get("optional_deadLetterBlocksItsKeyUntilReplayed").message())
                .contains("admin() returned empty");
        assertThat(skipped.get("optional_deadLetterBlocksItsKeyUntilDiscarded").message())
                .contains("admin() returned empty");
        assertThat(skipped.get("optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo").message())
                .contains("storeWhereDeadLettersDoNotBlock() returned empty");
        assertThat(report.failed()).isEmpty();
        assertThat(report.passed()).hasSize(report.outcomes.size() - skipped.size());
    }

    @Test
    @DisplayName(
            "the rule for a caller who commits after a rejected batch is skipped, naming the factory, when it is not supplied")
    void missingCommittingFactorySkipsItsRule() {
        KitReport report = KitReport.of(WithoutTheCommittingFactory.class);
        assertThat(report.skipped().keySet())
                .containsExactly("optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind");
        assertThat(
                        report.skipped()
                                .get(
                                        "optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind")
                                .message())
                .contains("enqueueCommittingDespiteFailure(List) is not overridden");
        assertThat(report.failed()).isEmpty();
    }

    @Test
    @DisplayName("a required_ rule is never skipped, whatever the knobs say")
    void requiredRulesAreNeverSkipped() {
        for (Class<? extends OutboxStoreContract> kit :
                List.of(EveryKnobOff.class, WithoutTheCommittingFactory.class)) {
            assertThat(KitReport.of(kit).skipped().keySet())
                    .as("rules skipped for %s", kit.getSimpleName())
                    .allSatisfy(rule -> assertThat(rule).startsWith("optional_"));
        }
    }
}
