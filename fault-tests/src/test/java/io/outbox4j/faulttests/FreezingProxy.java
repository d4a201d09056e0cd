package io.outbox4j.faulttests;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of one server (PostgreSQL here) that can stop forwarding: {@link
 * #freeze()} makes every connection through it go silent in both directions without closing it, as
 * a network partition without a reset does (or a firewall that drops packets); {@link #thaw()}
 * delivers what was held back and forwards again. A relay whose database connections all go through
 * one proxy can thus be cut off from its database while its process, its publisher and its broker
 * keep running.
 */
final class FreezingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;
    private volatile boolean closed;

    private FreezingProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "proxy-accept-" + server.getLocalPort());
        accept.setDaemon(true);
        accept.start();
    }

    /**
     * Starts a proxy in front of the server a JDBC URL names.
     *
     * @param jdbcUrl {@code jdbc:<driver>://host:port/...}
     * @return the running proxy
     */
    static FreezingProxy before(String jdbcUrl) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("//([^/:]+):(\\d+)/").matcher(jdbcUrl);
        if (!m.find()) {
            throw new IllegalArgumentException("no host:port in " + jdbcUrl);
        }
        try {
            return new FreezingProxy(
                    new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a proxy port", e);
        }
    }

    /** The proxy's port on loopback. */
    int port() {
        return server.getLocalPort();
    }

    /**
     * A JDBC URL like {@code url} whose host and port are this proxy's.
     *
     * @param url {@code jdbc:<driver>://host:port/...}
     * @return the URL through the proxy
     */
    String through(String url) {
        return url.replaceFirst("//[^/]+/", "//127.0.0.1:" + port() + "/");
    }

    /**
     * Stops forwarding, now, on every connection (bytes read meanwhile are held).
     *
     * @return when (epoch ms)
     */
    long freeze() {
        synchronized (gate) {
            frozen = true;
        }
        return System.currentTimeMillis();
    }

    /**
     * Forwards again, held bytes first.
     *
     * @return when (epoch ms)
     */
    long thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
        return System.currentTimeMillis();
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            try {
                Socket upstream = new Socket();
                upstream.connect(target, 5000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, "up");
                pump(upstream, client, "down");
            } catch (IOException e) {
                closeQuietly(client); // the server refused this one; the next may work
            }
        }
    }

    private void pump(Socket from, Socket to, String direction) {
        Thread t =
                new Thread(
                        () -> {
                            byte[] buffer = new byte[16 * 1024];
                            try (InputStream in = from.getInputStream();
                                    OutputStream out = to.getOutputStream()) {
                                int n;
                                while ((n = in.read(buffer)) >= 0) {
                                    awaitThawed();
                                    out.write(buffer, 0, n);
                                    out.flush();
                                }
                            } catch (IOException | InterruptedException e) {
                                // the other side closed, or the proxy did
                            } finally {
                                closeQuietly(from);
                                closeQuietly(to);
                            }
                        },
                        "proxy-" + direction + "-" + port());
        t.setDaemon(true);
        t.start();
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait();
            }
        }
    }

    private static void closeQuietly(java.io.Closeable s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        thaw();
        closeQuietly(server);
        sockets.forEach(FreezingProxy::closeQuietly);
    }
}
