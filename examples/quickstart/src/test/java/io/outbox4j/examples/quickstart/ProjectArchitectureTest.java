package io.outbox4j.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.outbox4j.tck.OutboxArchitecture;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The project's own architecture test (docs/architecture.md §2), applied to the main classes of
 * every module. It lives in the quickstart because this module depends on every other one and the
 * reactor builds it last; the rules themselves are the public ones of {@code outbox-tck} ({@link
 * OutboxArchitecture}).
 */
@ExtendWith(DependencyNamesOnly.class)
class ProjectArchitectureTest {
    /**
     * Each module and the fewest main classes it must contribute, so no rule can pass on an empty
     * import.
     */
    private static final Map<String, Integer> MINIMUM_CLASSES =
            Map.ofEntries(
                    Map.entry("api", 15),
                    Map.entry("engine", 3),
                    Map.entry("tck", 5),
                    Map.entry("store.jdbi", 2),
                    Map.entry("store.mongo", 2),
                    Map.entry("publisher.kafka", 2),
                    Map.entry("publisher.rabbitmq", 2),
                    Map.entry("publisher.sqs", 2),
                    Map.entry("kafka", 5),
                    Map.entry("cli", 5),
                    Map.entry("relay", 5),
                    Map.entry("console", 4),
                    Map.entry("micrometer", 2),
                    Map.entry("opentelemetry", 3),
                    Map.entry("spring", 10),
                    Map.entry("testservices", 2),
                    Map.entry("examples.quickstart", 2));

    private static JavaClasses classes;

    @BeforeAll
    static void importEveryModule() {
        classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages(OutboxArchitecture.ROOT);
    }

    @Test
    @DisplayName("the main classes of every module are imported (guard: no rule passes vacuously)")
    void everyModuleIsImported() {
        Map<String, Integer> found = OutboxArchitecture.classesPerModule(classes);
        MINIMUM_CLASSES.forEach(
                (module, minimum) ->
                        assertThat(found.getOrDefault(module, 0))
                                .as(
                                        "main classes of module '%s' on the test classpath (found per module: %s); a module missing "
                                                + "here would let every rule below pass without checking it",
                                        module, found)
                                .isGreaterThanOrEqualTo(minimum));
    }

    @TestFactory
    @DisplayName("every project architecture rule holds")
    Stream<DynamicTest> projectRules() {
        return OutboxArchitecture.projectRules().stream()
                .map(rule -> DynamicTest.dynamicTest(rule.getDescription(), () -> check(rule)));
    }

    private static void check(ArchRule rule) {
        rule.check(classes);
    }
}
