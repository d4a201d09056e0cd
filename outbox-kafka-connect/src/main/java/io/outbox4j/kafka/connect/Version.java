package io.outbox4j.kafka.connect;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The connector's version, from a resource Maven fills in at build time. */
final class Version {
    private static final String VERSION = load();

    private Version() {}

    static String get() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
