package io.outbox4j.tck;

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
        report.assertEveryRulePasses("wake-up", MINIMUM_RULES);
        report.assertRulesNamedAndDescribed("required_[a-z][A-Za-z]+");
    }
}
