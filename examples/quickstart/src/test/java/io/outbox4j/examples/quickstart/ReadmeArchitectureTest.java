package io.outbox4j.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.outbox4j.examples.quickstart.readme.config.OutboxWiring;
import io.outbox4j.examples.quickstart.readme.domain.OrderEvents;
import io.outbox4j.examples.quickstart.readme.persistence.OrderRepository;
import io.outbox4j.examples.quickstart.readme.web.RelayInAController;
import io.outbox4j.tck.OutboxArchitecture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's patterns (an event built with the api, enqueue through the {@code Outbox} port in a
 * Jdbi transaction, a composition root that builds the store, the Kafka publisher and the relay)
 * pass the ArchUnit rules users apply; a class that builds a relay outside the composition root
 * fails them. The Spring pattern ({@code @Transactional OrderService} with {@code
 * TransactionalOutbox}) is checked in examples/spring-boot.
 */
@ExtendWith(DependencyNamesOnly.class)
class ReadmeArchitectureTest {
    private static final String README = "io.outbox4j.examples.quickstart.readme.";
    private static final String DOMAIN = README + "domain..";
    private static final String CONFIG = README + "config..";
    private static final String PERSISTENCE = README + "persistence..";

    private static JavaClasses PATTERNS;
    private static JavaClasses WITH_STRAY_RELAY;

    @BeforeAll
    static void importTheFixtures() {
        PATTERNS =
                new ClassFileImporter()
                        .importClasses(
                                OrderEvents.class, OrderRepository.class, OutboxWiring.class);
        WITH_STRAY_RELAY =
                new ClassFileImporter()
                        .importClasses(
                                OrderEvents.class,
                                OrderRepository.class,
                                OutboxWiring.class,
                                RelayInAController.class);
    }

    @Test
    @DisplayName("the README's patterns pass the domain, composition-root and client rules")
    void readmePatternsPass() {
        assertThat(PATTERNS.size())
                .as("guard: the fixtures were imported")
                .isGreaterThanOrEqualTo(3);
        JavaClasses classes = PATTERNS;
        // tag::architecture-rules[]
        // domain code: io.outbox4j.api and TransactionalOutbox only
        OutboxArchitecture.domainMayOnlyUseOutboxApi(DOMAIN).check(classes);
        // only the composition root builds relays, stores and publishers
        OutboxArchitecture.compositionRootOnlyIn(CONFIG).check(classes);
        // broker and database clients (Jdbi, JDBC, Kafka, the engine...) only in these packages
        OutboxArchitecture.brokerClientsOnlyIn(PERSISTENCE, CONFIG).check(classes);
        // end::architecture-rules[]
    }

    @Test
    @DisplayName(
            "a controller that builds a relay fails the composition-root and client rules, naming it and the Relay")
    void relayBuiltOutsideTheCompositionRoot_fails() {
        assertThatThrownBy(
                        () ->
                                OutboxArchitecture.compositionRootOnlyIn(README + "config..")
                                        .check(WITH_STRAY_RELAY))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("may build relays, stores and publishers")
                .hasMessageContaining("RelayInAController")
                .hasMessageContaining("io.outbox4j.engine.Relay");
        assertThatThrownBy(
                        () ->
                                OutboxArchitecture.brokerClientsOnlyIn(
                                                README + "persistence..", README + "config..")
                                        .check(WITH_STRAY_RELAY))
                .as("wiring outside the named packages is caught by the client list too")
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("RelayInAController");
    }
}
