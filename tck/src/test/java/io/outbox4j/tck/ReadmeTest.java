package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * tck/README.md cannot rot: its code examples are the compiled example classes, and it names every
 * rule.
 */
class ReadmeTest {
    private static final Path MODULE = Path.of(System.getProperty("basedir", "."));

    private static String read(String relative) throws IOException {
        return Files.readString(MODULE.resolve(relative), StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "README shows the {1} region of {0} verbatim")
    @CsvSource({
        "src/test/java/io/outbox4j/tck/example/MyStoreContractTest.java, store-example",
        "src/test/java/io/outbox4j/tck/example/MyStorePropertiesTest.java, properties-example",
        "src/test/java/io/outbox4j/tck/example/MyAdminContractTest.java, admin-example",
        "src/test/java/io/outbox4j/tck/example/MyMembershipContractTest.java, membership-example",
        "src/test/java/io/outbox4j/tck/example/MyWakeUpsContractTest.java, wake-ups-example",
        "src/test/java/io/outbox4j/tck/example/MyArchitectureTest.java, arch-example"
    })
    void readmeShowsTheCompiledExample(String source, String tag) throws IOException {
        String code = read(source);
        String start = "// tag::" + tag + "[]\n";
        String end = "// end::" + tag + "[]";
        assertThat(code)
                .as("%s must mark its example with %s and %s", source, start.strip(), end)
                .contains(start, end);
        String region = code.substring(code.indexOf(start) + start.length(), code.indexOf(end));
        assertThat(read("README.md"))
                .as(
                        "README.md must show the %s region of %s verbatim in a ```java block; "
                                + "copy it again after changing the example",
                        tag, source)
                .contains("```java\n" + region + "```");
    }

    @Test
    @DisplayName("README names every rule of every kit")
    void readmeNamesEveryRule() throws IOException {
        List<String> rules = new ArrayList<>();
        for (Class<?> kit :
                List.of(
                        OutboxStoreContract.class,
                        OutboxAdminContract.class,
                        OutboxMembershipContract.class,
                        OutboxWakeUpsContract.class,
                        PublisherContract.class)) {
            for (Method m : KitReport.rulesOf(kit)) {
                rules.add(m.getName());
            }
        }
        String readme = read("README.md");
        assertThat(rules)
                .hasSizeGreaterThan(90)
                .allSatisfy(
                        rule ->
                                assertThat(readme)
                                        .as("README.md must list the rule %s", rule)
                                        .contains("`" + rule + "`"));
    }
}
