package io.outbox4j.tck.example;

// tag::arch-example[]
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.outbox4j.tck.OutboxArchitecture;
import org.junit.jupiter.api.Test;

class MyArchitectureTest {
    // Your root package, e.g. "com.acme"; add
    // .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
    // to check main code only (this example lives in test sources, so it keeps them).
    private static final JavaClasses CLASSES =
            new ClassFileImporter().importPackages("io.outbox4j.tck.example");

    @Test
    void domainUsesOnlyTheOutboxApi() {
        OutboxArchitecture.domainMayOnlyUseOutboxApi("io.outbox4j.tck.example.domain..")
                .check(CLASSES);
    }

    @Test
    void onlyTheMessagingPackageTouchesBrokerClients() {
        OutboxArchitecture.brokerClientsOnlyIn("io.outbox4j.tck.example.messaging..")
                .check(CLASSES);
    }

    @Test
    void nobodyPrintsOrUsesJavaUtilLogging() {
        OutboxArchitecture.noStandardStreamsOrJul().check(CLASSES);
    }
}
// end::arch-example[]
