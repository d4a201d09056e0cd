package io.outbox4j.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The membership kit against the reference store, run through the JUnit Platform. */
class ReferenceMembershipKitTest {
    /**
     * The membership kit has at least this many rules; a rule lost by accident fails this count.
     */
    static final int MINIMUM_RULES = 13;

    /** The README's example: the membership kit against the reference store. */
    static final String README_EXAMPLE = "io.outbox4j.tck.example.MyMembershipContractTest";

    @Test
    @DisplayName("every membership rule passes on the reference store and none is skipped")
    void everyRulePassesOnTheReferenceStore() {
        KitReport report = KitReport.of(README_EXAMPLE);
        report.assertEveryRulePasses("membership", MINIMUM_RULES);
        report.assertRulesNamedAndDescribed("required_[a-z][A-Za-z]+");
    }
}
