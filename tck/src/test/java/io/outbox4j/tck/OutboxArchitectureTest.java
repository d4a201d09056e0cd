package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.outbox4j.tck.archfixture.ArchFixtures;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The rules users apply, tried on fixture classes that keep or break them; and the project rules
 * that can run here, on the two modules on this module's classpath (the api and the tck itself).
 * The whole project is checked by ProjectArchitectureTest in examples/quickstart, which is built
 * after every module.
 */
class OutboxArchitectureTest {
    private static final JavaClasses CLEAN =
            new ClassFileImporter().importClasses(ArchFixtures.CleanDomainService.class);
    private static final JavaClasses LEAKY =
            new ClassFileImporter().importClasses(ArchFixtures.LeakyDomainService.class);
    private static final JavaClasses CHATTY =
            new ClassFileImporter().importClasses(ArchFixtures.Chatty.class);

    @Test
    @DisplayName("domain code that uses only io.outbox4j.api passes the domain rule")
    void domainRule_acceptsTheApi() {
        OutboxArchitecture.domainMayOnlyUseOutboxApi("io.outbox4j.tck.archfixture..").check(CLEAN);
    }

    @Test
    @DisplayName(
            "domain code that uses a concrete store fails the domain rule, naming the class and the dependency")
    void domainRule_rejectsAConcreteStore() {
        ArchRule rule =
                OutboxArchitecture.domainMayOnlyUseOutboxApi("io.outbox4j.tck.archfixture..");
        assertThatThrownBy(() -> rule.check(LEAKY))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("may use outbox4j only through io.outbox4j.api")
                .hasMessageContaining("LeakyDomainService")
                .hasMessageContaining("io.outbox4j.tck.InMemoryOutboxStore");
    }

    @Test
    @DisplayName("a rule over packages that match no class fails instead of passing vacuously")
    void domainRule_failsOnAMisspeltPackage() {
        ArchRule rule = OutboxArchitecture.domainMayOnlyUseOutboxApi("com.acme.typo..");
        assertThatThrownBy(() -> rule.check(CLEAN))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("failed to check any classes");
    }

    @Test
    @DisplayName("code without broker clients passes the broker-client rule")
    void brokerClientRule_acceptsCodeWithoutClients() {
        OutboxArchitecture.brokerClientsOnlyIn("com.acme.messaging..").check(CLEAN);
    }

    @Test
    @DisplayName("standard streams and java.util.logging are caught")
    void noStandardStreamsOrJul_catchesBoth() {
        assertThatThrownBy(() -> OutboxArchitecture.noStandardStreamsOrJul().check(CHATTY))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.lang.System.out")
                .hasMessageContaining("java.util.logging");
        OutboxArchitecture.noStandardStreamsOrJul().check(CLEAN);
    }

    @Test
    @DisplayName("a rule without packages is rejected at once with a clear message")
    void rulesRejectMissingPackages() {
        assertThatThrownBy(OutboxArchitecture::domainMayOnlyUseOutboxApi)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "domainPackages must name at least one package, e.g. 'com.acme.orders..'");
        assertThatThrownBy(() -> OutboxArchitecture.brokerClientsOnlyIn(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("adapterPackages");
        assertThatThrownBy(OutboxArchitecture::compositionRootOnlyIn)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "compositionRootPackages must name at least one package, e.g."
                                + " 'com.acme.orders..'");
    }

    @Test
    @DisplayName("the api and the tck keep the project rules that apply to them")
    void apiAndTckKeepTheProjectRules() {
        JavaClasses classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.outbox4j");
        assertThat(OutboxArchitecture.classesPerModule(classes))
                .as("the api and tck classes must be imported, or the rules below check nothing")
                .hasEntrySatisfying("api", n -> assertThat(n).isGreaterThan(15))
                .hasEntrySatisfying("tck", n -> assertThat(n).isGreaterThan(5));
        OutboxArchitecture.apiDependsOnTheJdkOnly().check(classes);
        OutboxArchitecture.noCyclesBetweenModules().check(classes);
        OutboxArchitecture.libraryHasNoStandardStreamsOrJul().check(classes);
        OutboxArchitecture.brokerClientsOnlyIn("io.outbox4j.store..", "io.outbox4j.publisher..")
                .check(classes);
    }
}
