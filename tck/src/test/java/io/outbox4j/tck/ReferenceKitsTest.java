package io.outbox4j.tck;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every kit against the reference store, run through the JUnit Platform (each through the README's
 * example of it), and the kits' shape.
 */
class ReferenceKitsTest {

    /** A kit, the README's example that runs it on the reference store, and its rule count. */
    enum Kit {
        STORE(
                "store",
                OutboxStoreContract.class,
                "io.outbox4j.tck.example.MyStoreContractTest",
                68,
                "(required|optional)_[a-z][A-Za-z]+"),
        ADMIN(
                "admin",
                OutboxAdminContract.class,
                "io.outbox4j.tck.example.MyAdminContractTest",
                20,
                "required_[a-z][A-Za-z]+"),
        MEMBERSHIP(
                "membership",
                OutboxMembershipContract.class,
                "io.outbox4j.tck.example.MyMembershipContractTest",
                13,
                "required_[a-z][A-Za-z]+"),
        WAKE_UPS(
                "wake-up",
                OutboxWakeUpsContract.class,
                "io.outbox4j.tck.example.MyWakeUpsContractTest",
                5,
                "required_[a-z][A-Za-z]+");

        final String name;
        final Class<?> contract;

        /** The README's example: the kit against the reference store. */
        final String readmeExample;

        /** The kit has at least this many rules; a rule lost by accident fails this count. */
        final int minimumRules;

        /** What every rule's method name matches. */
        final String rulePattern;

        Kit(
                String name,
                Class<?> contract,
                String readmeExample,
                int minimumRules,
                String rulePattern) {
            this.name = name;
            this.contract = contract;
            this.readmeExample = readmeExample;
            this.minimumRules = minimumRules;
            this.rulePattern = rulePattern;
        }
    }

    @ParameterizedTest(name = "every {0} rule passes on the reference store and none is skipped")
    @EnumSource(Kit.class)
    void everyRulePassesOnTheReferenceStore(Kit kit) {
        KitReport.of(kit.readmeExample).assertEveryRulePasses(kit.name, kit.minimumRules);
    }

    @ParameterizedTest(
            name = "every {0} rule is named as its kind of rule and has a sentence as display name")
    @EnumSource(Kit.class)
    void rulesAreNamedAndDescribed(Kit kit) {
        KitReport.of(kit.readmeExample).assertRulesNamedAndDescribed(kit.rulePattern);
    }

    @ParameterizedTest(
            name =
                    "{0} rules and rule groups are package-private, so a subclass cannot override or"
                            + " hide one")
    @EnumSource(Kit.class)
    void rulesCannotBeOverridden(Kit kit) {
        KitReport.assertRulesCannotBeOverridden(kit.contract, kit.minimumRules);
    }
}
