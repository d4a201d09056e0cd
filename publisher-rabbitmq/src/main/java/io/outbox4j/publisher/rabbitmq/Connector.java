package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox4j.api.RetryableFailureException;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Owns the publisher's one connection and its pool of idle confirm channels.
 *
 * <p>The connection is opened on first use and replaced on the first use after it closed; the
 * factory is a private copy with automatic recovery turned off, so a recovered connection can never
 * carry a confirm that the publisher would attribute to a message published before the loss. Idle
 * channels are handed to one call at a time; a channel that closed (or whose connection closed) is
 * discarded, never reused.
 */
final class Connector {
    private static final int MAX_IDLE_CHANNELS = 32;

    private final ConnectionFactory factory;
    private final String connectionName;
    private final Object connectLock = new Object();
    private final ConcurrentLinkedDeque<ConfirmChannel> idle = new ConcurrentLinkedDeque<>();

    /**
     * Exchanges a channel was closed for with 404; checked again before anything is published to
     * them.
     */
    private final Set<String> suspectExchanges = ConcurrentHashMap.newKeySet();

    /** The current connection; written under {@code connectLock}. */
    private volatile @Nullable Link link;

    private volatile boolean closed;

    Connector(ConnectionFactory factory, String connectionName) {
        this.factory = factory;
        this.connectionName = connectionName;
    }

    /**
     * Tells why the current connection is blocked by a broker resource alarm.
     *
     * @return the broker's reason, or {@code null} when it is not blocked (or there is no
     *     connection)
     */
    @Nullable String blockedReason() {
        Link l = link;
        return l == null || !l.connection.isOpen() ? null : l.blockedReason;
    }

    /** Hands out an open confirm channel: an idle one of the current connection, or a new one. */
    ConfirmChannel borrow() throws IOException, TimeoutException {
        ConfirmChannel c;
        while ((c = idle.pollLast()) != null) {
            if (c.isUsable() && isCurrent(c.connection())) {
                return c;
            }
            c.closeQuietly();
        }
        return ConfirmChannel.open(connection(), suspectExchanges::add);
    }

    /**
     * Tells whether an exchange exists. Only exchanges a channel was closed for (404) are checked,
     * with a passive declare on a throwaway channel; every other exchange is assumed to exist, at
     * no cost. This keeps messages to a missing exchange from closing the publishing channel, and
     * failing every other message of their call, on each retry.
     *
     * @return {@code false} only if the broker says the exchange does not exist
     */
    boolean exchangeExists(String exchange) throws IOException, TimeoutException {
        if (!suspectExchanges.contains(exchange)) {
            return true;
        }
        Channel probe = connection().createChannel();
        if (probe == null) {
            return true; // no free channel to check with: publish and let the broker decide
        }
        try {
            probe.exchangeDeclarePassive(exchange);
            suspectExchanges.remove(exchange);
            return true;
        } catch (IOException e) {
            if (e.getCause() instanceof ShutdownSignalException
                    && ConfirmChannel.missingExchange((ShutdownSignalException) e.getCause())
                            .isPresent()) {
                return false;
            }
            throw e;
        } finally {
            if (probe.isOpen()) {
                probe.abort();
            }
        }
    }

    /**
     * Takes back a channel whose call ended with every publish confirmed.
     *
     * @return {@code false} if the channel is not fit for reuse: the caller discards it (off its
     *     own thread)
     */
    boolean offer(ConfirmChannel c) {
        if (closed
                || !c.isUsable()
                || !isCurrent(c.connection())
                || c.hasUnconfirmed()
                || idle.size() >= MAX_IDLE_CHANNELS) {
            return false;
        }
        idle.addLast(c);
        return !(closed && idle.remove(c));
    }

    private boolean isCurrent(Connection connection) {
        Link l = link;
        return l != null && l.connection == connection;
    }

    private Connection connection() throws IOException, TimeoutException {
        Link l = link;
        if (l != null && l.connection.isOpen()) {
            return l.connection;
        }
        synchronized (connectLock) {
            ensureOpen();
            l = link;
            if (l != null && l.connection.isOpen()) {
                return l.connection;
            }
            Connection connection = factory.newConnection(connectionName);
            Link fresh = new Link(connection);
            connection.addBlockedListener(fresh);
            link = fresh;
            if (closed) {
                connection.abort();
                ensureOpen();
            }
            return connection;
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new RetryableFailureException("the RabbitMQ publisher is closed");
        }
    }

    /** The broker's address, {@code host:port}, for failure texts. */
    String address() {
        return factory.getHost() + ":" + factory.getPort();
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Stops handing out channels and closes the connection (which closes every channel). May block.
     */
    void close(int timeoutMillis) {
        closed = true;
        ConfirmChannel c;
        while ((c = idle.pollLast()) != null) {
            c.closeQuietly();
        }
        Link l = link;
        if (l != null) {
            l.connection.abort(timeoutMillis);
        }
    }

    /** A connection and whether the broker has blocked it. */
    private static final class Link implements BlockedListener {
        final Connection connection;
        volatile @Nullable String blockedReason;

        Link(Connection connection) {
            this.connection = connection;
        }

        @Override
        public void handleBlocked(String reason) {
            blockedReason = reason == null || reason.isBlank() ? "no reason given" : reason;
        }

        @Override
        public void handleUnblocked() {
            blockedReason = null;
        }
    }
}
