package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's knobs against the reference store: a rule a store cannot support skips naming the
 * knob ({@link ReferenceKitsTest} runs every kit with every knob on).
 */
class ReferenceStoreKitTest {
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
    @DisplayName(
            "rules a store cannot support are skipped with a message naming the knob, never passed")
    void unsupportedCapabilitiesSkipWithTheReason() {
        KitReport report = KitReport.of(EveryKnobOff.class);
        Map<String, String> reasons = new LinkedHashMap<>();
        reasons.put(
                "optional_rolledBackEnqueueIsNeverClaimable",
                "transactionsUnsupported() says the test server has no multi-document transactions");
        reasons.put(
                "optional_rejectedBatchLeavesNothingBehind",
                "transactionsUnsupported() says the test server has no multi-document transactions");
        reasons.put(
                "optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind",
                "transactionsUnsupported()");
        reasons.put(
                "optional_payloadOfTheDefaultLimitRoundTrips",
                "largePayloadUnsupported() says items are capped at 400 KB");
        reasons.put("optional_deadLetterBlocksItsKeyUntilReplayed", "admin() returned empty");
        reasons.put("optional_deadLetterBlocksItsKeyUntilDiscarded", "admin() returned empty");
        reasons.put(
                "optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo",
                "storeWhereDeadLettersDoNotBlock() returned empty");
        assertSkipsNamingTheKnob(report, reasons);
        assertThat(report.passed()).hasSize(report.outcomes.size() - reasons.size());
    }

    /** Checks that exactly these rules skipped, each with a message holding its phrase. */
    private static void assertSkipsNamingTheKnob(KitReport report, Map<String, String> reasons) {
        Map<String, KitReport.Outcome> skipped = report.skipped();
        assertThat(skipped.keySet()).containsExactlyInAnyOrderElementsOf(reasons.keySet());
        reasons.forEach(
                (rule, phrase) ->
                        assertThat(skipped.get(rule).message())
                                .as("the skip message of %s", rule)
                                .contains(phrase));
        assertThat(report.failed()).isEmpty();
    }

    @Test
    @DisplayName(
            "the rule for a caller who commits after a rejected batch is skipped, naming the factory, when it is not supplied")
    void missingCommittingFactorySkipsItsRule() {
        assertSkipsNamingTheKnob(
                KitReport.of(WithoutTheCommittingFactory.class),
                Map.of(
                        "optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind",
                        "enqueueCommittingDespiteFailure(List) is not overridden"));
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
