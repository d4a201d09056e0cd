package io.outbox4j.relay;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The relay's HTTP endpoint (the JDK's own server, no framework):
 *
 * <ul>
 *   <li>{@code GET /health/live}: 200 while the process works (its relay did not fail), else 503;
 *   <li>{@code GET /health/ready}: 200 while the relay runs and the store answers, else 503 with
 *       the reason;
 *   <li>{@code GET /metrics}: the Prometheus text exposition;
 *   <li>{@code /console/}: the web console, when enabled (docs/console.md).
 * </ul>
 */
final class HealthServer implements AutoCloseable {
    /** Why a check fails, or empty when it passes. */
    interface Check extends Supplier<Optional<String>> {}

    private final HttpServer server;
    private final ExecutorService threads;

    HealthServer(
            String host,
            int port,
            Check live,
            Check ready,
            Supplier<String> metrics,
            Optional<ConsoleHandler> console)
            throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 16);
        threads =
                Executors.newFixedThreadPool(
                        2,
                        r -> {
                            Thread t = new Thread(r, "outbox4j-relay-http");
                            t.setDaemon(true);
                            return t;
                        });
        server.setExecutor(threads);
        server.createContext("/health/live", ex -> check(ex, "live", live));
        server.createContext("/health/ready", ex -> check(ex, "ready", ready));
        server.createContext(
                "/metrics",
                ex -> {
                    if (allowed(ex, "/metrics")) {
                        respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get());
                    }
                });
        console.ifPresent(c -> server.createContext(ConsoleHandler.BASE, c));
        String pages =
                console.isPresent()
                        ? "/health/live, /health/ready, /metrics or /console/"
                        : "/health/live, /health/ready or /metrics";
        server.createContext(
                "/",
                ex ->
                        respond(
                                ex,
                                404,
                                "text/plain; charset=utf-8",
                                "not found; try " + pages + "\n"));
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private static void check(HttpExchange ex, String name, Check check) throws IOException {
        if (!allowed(ex, "/health/" + name)) {
            return;
        }
        Optional<String> problem = check.get();
        if (problem.isEmpty()) {
            respond(ex, 200, "text/plain; charset=utf-8", name + "\n");
        } else {
            respond(
                    ex,
                    503,
                    "text/plain; charset=utf-8",
                    "not " + name + ": " + problem.get() + "\n");
        }
    }

    /** Only GET and HEAD on the exact path; answers 404 or 405 otherwise. */
    private static boolean allowed(HttpExchange ex, String path) throws IOException {
        if (!ex.getRequestURI().getPath().equals(path)) {
            respond(ex, 404, "text/plain; charset=utf-8", "not found\n");
            return false;
        }
        String method = ex.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            ex.getResponseHeaders().set("Allow", "GET, HEAD");
            respond(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
            return false;
        }
        return true;
    }

    private static void respond(HttpExchange ex, int status, String contentType, String body)
            throws IOException {
        try (ex) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", contentType);
            ex.getResponseHeaders().set("Cache-Control", "no-store");
            boolean head = ex.getRequestMethod().equals("HEAD");
            ex.sendResponseHeaders(status, head ? -1 : bytes.length);
            if (!head) {
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
