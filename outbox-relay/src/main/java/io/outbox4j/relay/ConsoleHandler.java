package io.outbox4j.relay;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.outbox4j.console.OutboxConsole;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Serves the {@link OutboxConsole} under {@value #BASE} of the relay's HTTP server: each exchange
 * becomes a console request (query, a form body of at most {@value #MAX_BODY} bytes, headers) and
 * the console's response is written back as it is.
 */
final class ConsoleHandler implements HttpHandler {
    static final String BASE = "/console";
    static final int MAX_BODY = 256 * 1024;

    private final OutboxConsole console;

    ConsoleHandler(OutboxConsole console) {
        this.console = console;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            String below = path.length() <= BASE.length() ? "" : path.substring(BASE.length());
            if (!below.isEmpty() && !below.startsWith("/")) { // e.g. /consoleX
                sendText(ex, 404, "not found");
                return;
            }
            Map<String, String> headers = new HashMap<>();
            ex.getRequestHeaders()
                    .forEach(
                            (k, v) -> {
                                if (!v.isEmpty()) {
                                    headers.put(k, v.get(0));
                                }
                            });
            Map<String, List<String>> form = Map.of();
            String contentType = ex.getRequestHeaders().getFirst("Content-Type");
            if (ex.getRequestMethod().equals("POST")) {
                byte[] body;
                try (InputStream in = ex.getRequestBody()) {
                    body = in.readNBytes(MAX_BODY + 1);
                }
                if (body.length > MAX_BODY) {
                    sendText(ex, 413, "request too large");
                    return;
                }
                if (contentType != null
                        && contentType
                                .toLowerCase(Locale.ROOT)
                                .startsWith("application/x-www-form-urlencoded")) {
                    form = OutboxConsole.parameters(new String(body, StandardCharsets.UTF_8));
                }
            }
            OutboxConsole.Response r =
                    console.handle(
                            new OutboxConsole.Request(
                                    ex.getRequestMethod(),
                                    BASE,
                                    below,
                                    OutboxConsole.parameters(ex.getRequestURI().getRawQuery()),
                                    form,
                                    headers,
                                    Optional.empty()));
            send(ex, r.status(), r.headers(), r.body());
        }
    }

    /** Answers with a line of plain text, for the requests the console itself does not see. */
    private static void sendText(HttpExchange ex, int status, String line) throws IOException {
        send(
                ex,
                status,
                Map.of("Content-Type", "text/plain; charset=utf-8"),
                (line + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange ex, int status, Map<String, String> headers, byte[] body)
            throws IOException {
        headers.forEach((k, v) -> ex.getResponseHeaders().set(k, v));
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head || body.length == 0 ? -1 : body.length);
        if (!head && body.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
