package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.engine.RelaySetting;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code outbox4j.relay.*} properties are the engine's relay settings ({@link RelaySetting},
 * their one definition): every setting has its property, and the description an IDE shows (the
 * generated configuration metadata) gives the setting's bounds and default.
 */
class RelayPropertiesMetadataTest {
    private static Map<String, String> descriptions() throws IOException {
        Map<String, String> out = new HashMap<>();
        try (InputStream in =
                RelayPropertiesMetadataTest.class.getResourceAsStream(
                        "/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the generated configuration metadata").isNotNull();
            for (JsonNode p : JsonMapper.builder().build().readTree(in).get("properties")) {
                out.put(p.get("name").asString(), p.path("description").asString(""));
            }
        }
        return out;
    }

    private static String property(RelaySetting<?> setting) {
        return setting == RelaySetting.MAX_PUBLISH_STALL
                ? "outbox4j.health.max-publish-stall"
                : "outbox4j.relay." + setting.key();
    }

    @Test
    void everyRelaySettingIsAPropertyWhoseDescriptionGivesItsBoundsAndDefault() throws IOException {
        Map<String, String> descriptions = descriptions();
        for (RelaySetting<?> setting : RelaySetting.all()) {
            String name = property(setting);
            assertThat(descriptions).as("metadata of %s", name).containsKey(name);
            if (setting == RelaySetting.MAX_PUBLISH_STALL) {
                continue; // a health setting: described with the health properties
            }
            String description = descriptions.get(name);
            assertThat(description)
                    .as("description of %s", name)
                    .contains("default " + setting.defaultText().replace("batchSize", "batch-size"))
                    .contains(setting.bounds().isEmpty() ? "" : capitalized(setting.bounds()));
        }
    }

    private static String capitalized(String text) {
        return Character.toUpperCase(text.charAt(0)) + text.substring(1);
    }
}
