package io.outbox4j.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.outbox4j.tck.OutboxArchitecture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The README's Spring pattern, the example's own code: a {@code @Transactional OrderService} that
 * injects {@code TransactionalOutbox} (and the controller in front of it) passes the domain rule
 * and needs no composition root: the starter wires the outbox.
 */
class ReadmeArchitectureTest {
    private static JavaClasses SERVICE;

    /**
     * The rules look only at the names of the classes the imported ones depend on, not at their
     * bytecode: resolving them from the class path (ArchUnit's default) imported Spring's class
     * graph, several seconds, and changes no verdict.
     */
    @BeforeAll
    static void importTheExamplesClasses() {
        ArchConfiguration.get().setResolveMissingDependenciesFromClassPath(false);
        SERVICE = new ClassFileImporter().importClasses(OrderService.class, OrderController.class);
    }

    @AfterAll
    static void restoreArchUnitDefaults() {
        ArchConfiguration.get().reset();
    }

    @Test
    @DisplayName(
            "the README's @Transactional OrderService with TransactionalOutbox passes the domain and composition-root rules")
    void springPatternPasses() {
        assertThat(SERVICE.size()).as("guard: the classes were imported").isGreaterThanOrEqualTo(2);
        assertThat(SERVICE.get(OrderService.class).getDirectDependenciesFromSelf())
                .as("guard: the service really injects TransactionalOutbox")
                .anyMatch(
                        d ->
                                d.getTargetClass()
                                        .getName()
                                        .equals("io.outbox4j.spring.boot.TransactionalOutbox"));
        OutboxArchitecture.domainMayOnlyUseOutboxApi("io.outbox4j.examples.springboot..")
                .check(SERVICE);
        OutboxArchitecture.compositionRootOnlyIn("io.outbox4j.examples.springboot.config..")
                .check(SERVICE);
    }
}
