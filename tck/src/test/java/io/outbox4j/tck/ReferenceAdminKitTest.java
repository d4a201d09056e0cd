package io.outbox4j.tck;

import org.junit.jupiter.api.DisplayName;
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
        KitReport.of(README_EXAMPLE).assertEveryRulePasses("admin", MINIMUM_RULES);
    }

    @Test
    @DisplayName("every admin rule is named required_ and has a sentence as display name")
    void rulesAreNamedAndDescribed() {
        KitReport.of(README_EXAMPLE).assertRulesNamedAndDescribed("required_[a-z][A-Za-z]+");
    }

    @Test
    @DisplayName(
            "admin rules and rule groups are package-private, so a subclass cannot override one")
    void rulesCannotBeOverridden() {
        KitReport.assertRulesCannotBeOverridden(OutboxAdminContract.class, MINIMUM_RULES);
    }
}
