package io.outbox4j.tck;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.all;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.lang.AbstractClassesTransformer;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.GeneralCodingRules;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.outbox4j.api.Incubating;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * ArchUnit rules for code bases that use outbox4j, and the rules outbox4j applies to itself.
 *
 * <p>For users: import your own classes and check them, for example
 *
 * <pre>{@code
 * JavaClasses classes = new ClassFileImporter()
 *         .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("com.acme");
 * OutboxArchitecture.domainMayOnlyUseOutboxApi("com.acme.orders.domain..").check(classes);
 * OutboxArchitecture.brokerClientsOnlyIn("com.acme.messaging..").check(classes);
 * OutboxArchitecture.noStandardStreamsOrJul().check(classes);
 * }</pre>
 *
 * Package arguments use ArchUnit's package syntax ({@code "com.acme.orders.."} means the package
 * and its subpackages). A rule whose packages match no imported class fails, so a misspelt package
 * cannot make it pass vacuously.
 *
 * <p>For the project: {@link #projectRules()} lists the layering of docs/architecture.md §2 as
 * ready-made rules over classes imported from {@code io.outbox4j}; {@link
 * #classesPerModule(JavaClasses)} supports the guard that every module was actually imported.
 */
@Incubating
public final class OutboxArchitecture {
    /** The root package of outbox4j. */
    public static final String ROOT = "io.outbox4j";

    private static final String ROOT_PREFIX = ROOT + ".";

    /**
     * Packages of broker and database clients that only adapter code (and the composition root that
     * wires them) may use: Kafka, RabbitMQ, the AWS SDK, MongoDB, Jdbi, HikariCP, JDBC ({@code
     * java.sql}, {@code javax.sql}) and outbox4j's own implementation ({@link
     * #IMPLEMENTATION_PACKAGES}: the engine, the stores, the publishers).
     */
    public static final List<String> CLIENT_PACKAGES =
            List.of(
                    "org.apache.kafka..",
                    "com.rabbitmq..",
                    "software.amazon.awssdk..",
                    "com.mongodb..",
                    "org.jdbi..",
                    "com.zaxxer.hikari..",
                    "java.sql..",
                    "javax.sql..",
                    "io.outbox4j.engine..",
                    "io.outbox4j.store..",
                    "io.outbox4j.publisher..");

    /**
     * outbox4j's packages that build relays, stores and publishers (and wrap them: metrics,
     * tracing, the Spring Boot starter's configuration): only a composition root uses them ({@link
     * #compositionRootOnlyIn}).
     */
    public static final List<String> IMPLEMENTATION_PACKAGES =
            List.of(
                    "io.outbox4j.engine..",
                    "io.outbox4j.store..",
                    "io.outbox4j.publisher..",
                    "io.outbox4j.micrometer..",
                    "io.outbox4j.opentelemetry..",
                    "io.outbox4j.kafka..",
                    "io.outbox4j.spring..");

    /**
     * The ports of outbox4j for application code beside {@code io.outbox4j.api}: the Spring Boot
     * starter's {@code TransactionalOutbox} (enqueue in the Spring-managed transaction), which a
     * {@code @Transactional} service injects.
     */
    public static final List<String> APPLICATION_PORTS =
            List.of("io.outbox4j.spring.boot.TransactionalOutbox");

    /** The third-party clients of {@link #CLIENT_PACKAGES}, for the project's own rule. */
    private static final List<String> THIRD_PARTY_CLIENTS =
            CLIENT_PACKAGES.stream().filter(p -> !p.startsWith(ROOT_PREFIX)).toList();

    private static final String API = "io.outbox4j.api..";
    private static final String ENGINE = "io.outbox4j.engine..";

    /** The web console: pages over the admin port, served by the relay and the starter. */
    private static final String CONSOLE = "io.outbox4j.console..";

    private static final String[] ADAPTERS = {"io.outbox4j.store..", "io.outbox4j.publisher.."};

    /** Integrations on engines users already run (the Kafka Connect connector): may use a store. */
    private static final String INTEGRATIONS = "io.outbox4j.kafka..";

    /**
     * The Spring Boot starter: library code that builds stores (Jdbi, MongoDB), publishers (the AWS
     * SDK client) and the relay from an application's beans and properties.
     */
    private static final String SPRING = "io.outbox4j.spring..";

    /**
     * Runnable programs (the standalone relay, the outbox4j command): they wire stores, publishers
     * and the engine together and may print, so they are not library code.
     */
    private static final String[] APPLICATIONS = {"io.outbox4j.relay..", "io.outbox4j.cli.."};

    private static final String[] LIBRARY = {
        API,
        ENGINE,
        "io.outbox4j.tck..",
        "io.outbox4j.store..",
        "io.outbox4j.publisher..",
        INTEGRATIONS,
        SPRING,
        CONSOLE,
        "io.outbox4j.micrometer..",
        "io.outbox4j.opentelemetry.."
    };

    private OutboxArchitecture() {}

    // ------------------------------------------------------------------------------------------------
    // Rules for users
    // ------------------------------------------------------------------------------------------------

    /**
     * Classes in the given packages may use outbox4j only through its ports: {@code
     * io.outbox4j.api} and the {@link #APPLICATION_PORTS} (the Spring Boot starter's {@code
     * TransactionalOutbox}, as the README's {@code @Transactional OrderService} injects it); no
     * engine, no adapter, no TCK.
     *
     * @param domainPackages the packages holding domain code, in ArchUnit syntax (e.g. {@code
     *     "com.acme.orders.."})
     * @return the rule
     * @throws IllegalArgumentException if no package is given or one is blank
     */
    public static ArchRule domainMayOnlyUseOutboxApi(String... domainPackages) {
        String[] packages = packages("domainPackages", domainPackages);
        return noClasses()
                .that()
                .resideInAnyPackage(packages)
                .should()
                .dependOnClassesThat(
                        resideInAPackage(ROOT + "..")
                                .and(not(resideInAPackage(API)))
                                .and(not(namedAnyOf(APPLICATION_PORTS)))
                                .and(not(resideInAnyPackage(packages))))
                .as(
                        "classes in "
                                + String.join(", ", packages)
                                + " may use outbox4j only through io.outbox4j.api (and "
                                + String.join(", ", APPLICATION_PORTS)
                                + ")")
                .because("domain code must not know which store, broker or relay is used");
    }

    /**
     * No class outside the given packages uses a broker or database client ({@link
     * #CLIENT_PACKAGES}: Kafka, RabbitMQ, the AWS SDK, MongoDB, Jdbi, HikariCP, JDBC, and
     * outbox4j's engine, stores and publishers). Name your adapters and your composition root
     * (where the relay, store and publisher are built).
     *
     * @param adapterPackages the packages allowed to use those clients, in ArchUnit syntax
     * @return the rule
     * @throws IllegalArgumentException if no package is given or one is blank
     */
    public static ArchRule brokerClientsOnlyIn(String... adapterPackages) {
        return clientsOnlyIn(CLIENT_PACKAGES, packages("adapterPackages", adapterPackages));
    }

    private static ArchRule clientsOnlyIn(List<String> clients, String... packages) {
        return noClasses()
                .that()
                .resideOutsideOfPackages(packages)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(clients.toArray(new String[0]))
                .as(
                        "only classes in "
                                + String.join(", ", packages)
                                + " may use a broker or database client ("
                                + String.join(", ", clients)
                                + ")")
                .because("transport and storage details belong in adapters");
    }

    /**
     * Only the given packages (an application's composition root: its configuration, its {@code
     * main}) build relays, stores and publishers: no class outside them uses {@link
     * #IMPLEMENTATION_PACKAGES} (the engine, the stores, the publishers, the metrics and tracing
     * wrappers, the Spring Boot starter's configuration). Application code elsewhere uses the ports
     * ({@code io.outbox4j.api}, {@link #APPLICATION_PORTS}).
     *
     * @param compositionRootPackages the packages allowed to wire outbox4j, in ArchUnit syntax
     * @return the rule
     * @throws IllegalArgumentException if no package is given or one is blank
     */
    public static ArchRule compositionRootOnlyIn(String... compositionRootPackages) {
        String[] packages = packages("compositionRootPackages", compositionRootPackages);
        return noClasses()
                .that()
                .resideOutsideOfPackages(packages)
                .should()
                .dependOnClassesThat(
                        resideInAnyPackage(IMPLEMENTATION_PACKAGES.toArray(new String[0]))
                                .and(not(namedAnyOf(APPLICATION_PORTS))))
                .as(
                        "only classes in "
                                + String.join(", ", packages)
                                + " may build relays, stores and publishers ("
                                + String.join(", ", IMPLEMENTATION_PACKAGES)
                                + ")")
                .because(
                        "one composition root wires the outbox; the rest of the application uses its"
                                + " ports");
    }

    private static DescribedPredicate<JavaClass> namedAnyOf(List<String> names) {
        return DescribedPredicate.describe(
                "named " + String.join(" or ", names), c -> names.contains(c.getName()));
    }

    /**
     * No class writes to {@code System.out} / {@code System.err}, prints a stack trace to them, or
     * logs through {@code java.util.logging}.
     *
     * @return the rule
     */
    public static ArchRule noStandardStreamsOrJul() {
        return CompositeArchRule.of(GeneralCodingRules.NO_CLASSES_SHOULD_ACCESS_STANDARD_STREAMS)
                .and(GeneralCodingRules.NO_CLASSES_SHOULD_USE_JAVA_UTIL_LOGGING);
    }

    // ------------------------------------------------------------------------------------------------
    // The project's own rules (docs/architecture.md §2)
    // ------------------------------------------------------------------------------------------------

    /**
     * {@code io.outbox4j.api} depends on the JDK only (and on the JSpecify nullness annotations,
     * which need not be present at run time).
     *
     * @return the rule
     */
    public static ArchRule apiDependsOnTheJdkOnly() {
        return classes()
                .that()
                .resideInAPackage(API)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("java..", API, "org.jspecify.annotations..")
                .because(
                        "the ports must not drag a third-party jar into an application (docs/architecture.md §2);"
                                + " the nullness annotations are not needed at run time");
    }

    /**
     * {@code io.outbox4j.console} depends on the JDK and the api only (and the JSpecify nullness
     * annotations): no HTTP server, no template engine, no store; its hosts (the standalone relay,
     * the Spring Boot starter) adapt it to their own HTTP servers.
     *
     * @return the rule
     */
    public static ArchRule consoleDependsOnTheApiOnly() {
        return classes()
                .that()
                .resideInAPackage(CONSOLE)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "java..", "javax.crypto..", API, CONSOLE, "org.jspecify.annotations..")
                .because(
                        "the console is served by every host through one transport-neutral request"
                                + " (docs/console.md) and must not drag a web framework along");
    }

    /**
     * {@code io.outbox4j.engine} depends on the JDK, the api and slf4j only (and the JSpecify
     * nullness annotations): never on an adapter.
     *
     * @return the rule
     */
    public static ArchRule engineDependsOnTheApiOnly() {
        return classes()
                .that()
                .resideInAPackage(ENGINE)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "java..", API, ENGINE, "org.slf4j..", "org.jspecify.annotations..")
                .because(
                        "the engine works with any store and publisher through the ports (docs/architecture.md §2)");
    }

    /**
     * No adapter (a store or publisher module) depends on another adapter.
     *
     * @return the rule
     */
    public static ArchRule adaptersDoNotDependOnEachOther() {
        return slices().assignedFrom(ADAPTER_MODULES)
                .should()
                .notDependOnEachOther()
                .because(
                        "each adapter is one module a user picks on its own (docs/architecture.md §2)");
    }

    /**
     * No adapter depends on the engine, an integration (the Kafka Connect connector), an
     * application (the standalone relay, the outbox4j command), the TCK or the test fixtures: only
     * on the api and its own client.
     *
     * @return the rule
     */
    public static ArchRule adaptersDoNotDependOnTheEngine() {
        return noClasses()
                .that()
                .resideInAnyPackage(ADAPTERS)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        ENGINE,
                        INTEGRATIONS,
                        SPRING,
                        APPLICATIONS[0],
                        APPLICATIONS[1],
                        "io.outbox4j.tck..",
                        "io.outbox4j.testservices..",
                        "io.outbox4j.examples..",
                        "io.outbox4j.benchmarks..")
                .because(
                        "an adapter is used by the engine through the ports, never the other way (docs/architecture.md §2)");
    }

    /**
     * The modules of outbox4j (api, engine, tck, each store and publisher…) are free of cycles.
     *
     * @return the rule
     */
    public static ArchRule noCyclesBetweenModules() {
        return slices().assignedFrom(MODULES).should().beFreeOfCycles();
    }

    /**
     * Library code (api, engine, tck, stores, publishers, integrations, the observability modules)
     * neither uses the standard streams nor {@code java.util.logging}.
     *
     * @return the rule
     */
    public static ArchRule libraryHasNoStandardStreamsOrJul() {
        return noClasses()
                .that()
                .resideInAnyPackage(LIBRARY)
                .should(GeneralCodingRules.ACCESS_STANDARD_STREAMS)
                .orShould(GeneralCodingRules.USE_JAVA_UTIL_LOGGING)
                .because("a library logs through slf4j at most (docs/architecture.md §2)");
    }

    /**
     * Each adapter module exposes at most one public top-level class outside its {@code
     * ..internal..} packages: its entry point. Everything else is package-private or internal.
     *
     * @return the rule
     */
    public static ArchRule adapterImplementationsAreHidden() {
        AbstractClassesTransformer<AdapterModule> adapters =
                new AbstractClassesTransformer<>("adapter modules") {
                    @Override
                    public Iterable<AdapterModule> doTransform(JavaClasses classes) {
                        Map<String, List<JavaClass>> byModule = new TreeMap<>();
                        for (JavaClass c : classes) {
                            moduleOf(c)
                                    .filter(
                                            m ->
                                                    m.startsWith("store.")
                                                            || m.startsWith("publisher."))
                                    .ifPresent(
                                            m ->
                                                    byModule.computeIfAbsent(
                                                                    m, k -> new ArrayList<>())
                                                            .add(c));
                        }
                        return byModule.entrySet().stream()
                                .map(e -> new AdapterModule(e.getKey(), e.getValue()))
                                .collect(Collectors.toList());
                    }
                };
        ArchCondition<AdapterModule> oneEntryPoint =
                new ArchCondition<>(
                        "expose at most one public top-level class outside ..internal.. (the entry point)") {
                    @Override
                    public void check(AdapterModule module, ConditionEvents events) {
                        List<String> exposed =
                                module.classes().stream()
                                        .filter(
                                                c ->
                                                        c.isTopLevelClass()
                                                                && c.getModifiers()
                                                                        .contains(
                                                                                JavaModifier
                                                                                        .PUBLIC))
                                        .filter(c -> !c.getPackageName().contains(".internal"))
                                        .filter(c -> !c.getSimpleName().equals("package-info"))
                                        .map(JavaClass::getName)
                                        .sorted()
                                        .collect(Collectors.toList());
                        boolean ok = exposed.size() <= 1;
                        String message =
                                "adapter "
                                        + module.name()
                                        + " exposes "
                                        + exposed.size()
                                        + " public classes "
                                        + "outside ..internal..: "
                                        + exposed
                                        + (ok
                                                ? ""
                                                : "; keep one entry point public and make "
                                                        + "the others package-private or move them to an ..internal.. package");
                        events.add(new SimpleConditionEvent(module, ok, message));
                    }
                };
        return all(adapters)
                .should(oneEntryPoint)
                .because(
                        "an adapter's API is one builder or factory; the rest can change freely (docs/architecture.md §2)");
    }

    /**
     * Every project rule above, in the order a reader meets them in docs/architecture.md §2.
     *
     * @return the project's architecture rules
     */
    public static List<ArchRule> projectRules() {
        return List.of(
                apiDependsOnTheJdkOnly(),
                engineDependsOnTheApiOnly(),
                consoleDependsOnTheApiOnly(),
                adaptersDoNotDependOnEachOther(),
                adaptersDoNotDependOnTheEngine(),
                noCyclesBetweenModules(),
                libraryHasNoStandardStreamsOrJul(),
                adapterImplementationsAreHidden(),
                clientsOnlyIn(
                        THIRD_PARTY_CLIENTS,
                        ROOT + ".store..",
                        ROOT + ".publisher..",
                        INTEGRATIONS,
                        SPRING,
                        APPLICATIONS[0],
                        APPLICATIONS[1],
                        ROOT + ".testservices..",
                        ROOT + ".examples..",
                        ROOT + ".benchmarks.."));
    }

    /**
     * Counts imported classes per outbox4j module, for a guard that every expected module was
     * imported. Module names are the package below {@code io.outbox4j}: {@code api}, {@code
     * engine}, {@code tck}, {@code store.jdbi}, {@code publisher.kafka}, {@code
     * examples.quickstart}…
     *
     * @param classes the imported classes
     * @return module name to number of classes, sorted by name
     */
    public static Map<String, Integer> classesPerModule(JavaClasses classes) {
        Map<String, Integer> out = new TreeMap<>();
        for (JavaClass c : classes) {
            moduleOf(c).ifPresent(m -> out.merge(m, 1, Integer::sum));
        }
        return out;
    }

    /**
     * The module of a class: the package below io.outbox4j (two segments for store, publisher,
     * examples).
     */
    static Optional<String> moduleOf(JavaClass c) {
        String pkg = c.getPackageName();
        if (!pkg.startsWith(ROOT + ".")) {
            return Optional.empty();
        }
        String[] parts = pkg.substring(ROOT.length() + 1).split("\\.", -1);
        boolean twoLevels =
                parts.length > 1
                        && (parts[0].equals("store")
                                || parts[0].equals("publisher")
                                || parts[0].equals("examples"));
        return Optional.of(twoLevels ? parts[0] + "." + parts[1] : parts[0]);
    }

    private static String[] packages(String name, String[] given) {
        if (given == null || given.length == 0) {
            throw new IllegalArgumentException(
                    name + " must name at least one package, e.g. 'com.acme.orders..'");
        }
        for (String p : given) {
            if (p == null || p.isBlank()) {
                throw new IllegalArgumentException(
                        name
                                + " must not contain a blank package, but was "
                                + Arrays.toString(given));
            }
        }
        return given.clone();
    }

    /** The classes of one adapter module. */
    private record AdapterModule(String name, List<JavaClass> classes) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final SliceAssignment MODULES =
            new SliceAssignment() {
                @Override
                public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                    return moduleOf(javaClass)
                            .map(SliceIdentifier::of)
                            .orElse(SliceIdentifier.ignore());
                }

                @Override
                public String getDescription() {
                    return "outbox4j modules";
                }
            };

    private static final SliceAssignment ADAPTER_MODULES =
            new SliceAssignment() {
                @Override
                public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                    return moduleOf(javaClass)
                            .filter(m -> m.startsWith("store.") || m.startsWith("publisher."))
                            .map(SliceIdentifier::of)
                            .orElse(SliceIdentifier.ignore());
                }

                @Override
                public String getDescription() {
                    return "outbox4j adapters";
                }
            };
}
