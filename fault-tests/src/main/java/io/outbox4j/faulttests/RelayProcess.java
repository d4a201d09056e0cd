package io.outbox4j.faulttests;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Observer;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.jdbi.v3.core.Jdbi;

/**
 * A relay as a process of its own: PostgreSQL outbox → relay → Kafka, with the drill settings, its
 * leases journaled to a file ({@link LeaseJournal}). Started by {@link ChildRelay}; arguments are
 * {@code name=value}: {@code jdbcUrl}, {@code user}, {@code password}, {@code bootstrap}, {@code
 * owner}, {@code journal} and the {@link RelaySettings#toArgs()} (with {@code memberLeaseMs} above
 * zero the relay is a member of the outbox: {@link FaultRelays#relay}).
 *
 * <p>It runs until its standard input ends (the parent closed it, or died) or it gets SIGTERM, then
 * closes the relay gracefully (a member leaves the outbox) and exits; or until it is killed.
 */
public final class RelayProcess {
    private RelayProcess() {}

    /**
     * Runs the relay.
     *
     * @param args {@code name=value} arguments
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> a = parse(args);
        RelaySettings settings = RelaySettings.fromArgs(a);
        String owner = RelaySettings.required(a, "owner");
        HikariDataSource pool =
                OutboxDatabase.pool(
                        RelaySettings.required(a, "jdbcUrl"),
                        RelaySettings.required(a, "user"),
                        a.getOrDefault("password", ""),
                        settings.workers() + 2,
                        "relay-" + owner);
        JdbiOutboxStore store = JdbiOutboxStore.builder(Jdbi.create(pool)).build();
        LeaseJournal journal =
                LeaseJournal.toFile(store, Path.of(RelaySettings.required(a, "journal")));
        Publisher publisher =
                FaultRelays.withLinkLatency(
                        FaultRelays.kafkaPublisher(
                                RelaySettings.required(a, "bootstrap"), owner, settings),
                        settings.linkLatency());
        Relay relay = FaultRelays.relay(journal, publisher, owner, settings, Observer.NOOP);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    relay.close();
                                    publisher.close();
                                    pool.close();
                                },
                                "relay-process-shutdown"));
        relay.start();
        journal.ready();
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        while (in.read(buffer) >= 0) {
            // nothing is expected on stdin; its end is the signal to stop
        }
        System.exit(0);
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected name=value, but got '" + arg + "'");
            }
            m.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return m;
    }
}
