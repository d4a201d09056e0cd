package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The wake-up kit against the reference store, run through the JUnit Platform. */
class ReferenceWakeUpsKitTest {
    /** The wake-up kit has at least this many rules; a rule lost by accident fails this count. */
    static final int MINIMUM_RULES = 5;

    /** The README's example: the wake-up kit against the reference store. */
    static final String README_EXAMPLE = "io.outbox4j.tck.example.MyWakeUpsContractTest";

    @Test
    @DisplayName("every wake-up rule passes on the reference store and none is skipped")
    void everyRulePassesOnTheReferenceStore() {
        KitReport report = KitReport.of(README_EXAMPLE);
        assertThat(report.failed()).as("wake-up rules failing on the reference store").isEmpty();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.failedContainers).isZero();
        assertThat(report.passed()).hasSizeGreaterThanOrEqualTo(MINIMUM_RULES);
        assertThat(report.outcomes.keySet())
                .allMatch(rule -> rule.matches("required_[a-z][A-Za-z]+"));
    }
}
