package io.outbox4j.examples.quickstart;

import com.tngtech.archunit.ArchConfiguration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For the ArchUnit tests of a class: the rules look only at the names of the classes the imported
 * ones depend on, not at their bytecode. Resolving them from the class path (ArchUnit's default)
 * imports the class graph of Jdbi, Kafka and the engine, seconds, and changes no verdict. Set
 * before the class's {@code @BeforeAll} imports, ArchUnit's defaults restored after it.
 */
final class DependencyNamesOnly implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        ArchConfiguration.get().setResolveMissingDependenciesFromClassPath(false);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        ArchConfiguration.get().reset();
    }
}
