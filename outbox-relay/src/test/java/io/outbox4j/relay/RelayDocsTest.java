package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.StoreConnection;
import io.outbox4j.engine.RelaySetting;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/relay.md lists every setting the relay reads, with the defaults the code has. */
class RelayDocsTest {
    private static final Path DOC = Path.of("..", "docs", "relay.md");
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `([a-z.-]+)` \\| ([^|]*) \\|");

    private static Map<String, String> table() throws IOException {
        String text = Files.readString(DOC, StandardCharsets.UTF_8);
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = ROW.matcher(text);
        while (m.find()) {
            rows.put(m.group(1), m.group(2).strip());
        }
        return rows;
    }

    @Test
    void theSettingsTableNamesEveryKeyTheRelayReads() throws IOException {
        assertThat(table().keySet()).containsAll(RelayConfig.KEYS);
    }

    @Test
    void theRelayReadsEverySettingOfTheEngine() {
        assertThat(RelayConfig.KEYS)
                .containsAll(RelaySetting.all().stream().map(RelayConfig::key).toList());
    }

    @Test
    void theDefaultsInTheTableAreTheCodes() throws IOException {
        Map<String, String> expected = new LinkedHashMap<>();
        for (RelaySetting<?> setting : RelaySetting.all()) {
            if (setting.defaultValue().isPresent()) { // derived defaults are described in words
                expected.put(RelayConfig.key(setting), setting.defaultText());
            }
        }
        expected.put("http.port", String.valueOf(RelayConfig.DEFAULT_HTTP_PORT));
        expected.put("console.page-size", String.valueOf(RelayConfig.DEFAULT_CONSOLE_PAGE_SIZE));
        expected.put(
                "metrics.statistics-interval",
                Settings.format(RelayConfig.DEFAULT_STATISTICS_INTERVAL));
        expected.put(
                "store.connect-timeout", Settings.format(StoreConnection.DEFAULT_CONNECT_TIMEOUT));
        Map<String, String> table = table();
        expected.forEach(
                (key, value) ->
                        assertThat(table.get(key))
                                .as("default of %s in %s", key, DOC)
                                .isEqualTo("`" + value + "`"));
    }
}
