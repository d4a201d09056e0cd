package io.outbox4j.publisher.kafka;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Why no broker answers, for the failure text of a record Kafka did not acknowledge in time: the
 * producer knows (it logs "Connection to node -1 could not be established") but tells its caller
 * only that the record expired. One TCP connect to each bootstrap address (at most three, together
 * bounded by {@link #BUDGET_MS}, so the call it explains ends at most that much later), the answer
 * reused for {@link #REUSE_NANOS}, so a failing batch costs at most one round of connects; none for
 * an interrupted caller.
 */
final class BrokerProbe {
    static final int BUDGET_MS = 500;
    static final long REUSE_NANOS = 5_000_000_000L;
    private static final int MAX_ADDRESSES = 3;

    private final List<String> addresses;
    private String last = "";
    private long checkedAt;
    private boolean checked;

    private BrokerProbe(List<String> addresses) {
        this.addresses = addresses;
    }

    /**
     * A probe of the producer's {@code bootstrap.servers}, or null when there are none to probe.
     *
     * @param bootstrapServers {@code host:port[,host:port...]} or a list of them, or null
     */
    static @Nullable BrokerProbe of(@Nullable Object bootstrapServers) {
        if (bootstrapServers == null) {
            return null;
        }
        List<String> list = new ArrayList<>();
        String text =
                bootstrapServers instanceof Collection<?> c
                        ? String.join(",", c.stream().map(String::valueOf).toList())
                        : bootstrapServers.toString();
        for (String a : text.split(",", -1)) {
            String address = a.strip();
            if (!address.isEmpty() && list.size() < MAX_ADDRESSES) {
                list.add(address);
            }
        }
        return list.isEmpty() ? null : new BrokerProbe(List.copyOf(list));
    }

    /**
     * Why no bootstrap broker can be reached, such as {@code connection refused by 127.0.0.1:9092},
     * or null when one accepts a connection (then the cause lies elsewhere: the partition leader,
     * the broker's advertised listeners, its load).
     */
    synchronized @Nullable String unreachable() {
        if (Thread.currentThread().isInterrupted()) {
            return null; // the caller gave up: no blocking connect now
        }
        long now = System.nanoTime();
        if (checked && now - checkedAt < REUSE_NANOS) {
            return last.isEmpty() ? null : last;
        }
        List<String> problems = new ArrayList<>();
        int timeout = Math.max(1, BUDGET_MS / addresses.size());
        for (String address : addresses) {
            String problem = connect(address, timeout);
            if (problem == null) {
                problems.clear();
                break;
            }
            problems.add(problem);
        }
        last = String.join(", ", problems);
        checkedAt = System.nanoTime();
        checked = true;
        return last.isEmpty() ? null : last;
    }

    private static @Nullable String connect(String address, int timeoutMs) {
        int colon = address.lastIndexOf(':');
        String host = colon > 0 ? address.substring(0, colon) : address;
        int port;
        try {
            port = colon > 0 ? Integer.parseInt(address.substring(colon + 1)) : 9092;
        } catch (NumberFormatException e) {
            return "bootstrap address '" + address + "' has no valid port";
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), timeoutMs);
            return null;
        } catch (UnknownHostException e) {
            return "unknown host '" + host + "'";
        } catch (ConnectException e) {
            return "connection refused by " + address;
        } catch (SocketTimeoutException e) {
            return address + " did not answer within " + timeoutMs + "ms";
        } catch (IOException | IllegalArgumentException e) {
            return "cannot connect to " + address + ": " + e.getMessage();
        }
    }
}
