package io.outbox4j.spring.boot;

import io.outbox4j.console.OutboxConsole;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Serves the {@link OutboxConsole} of each outbox from the management server: with one outbox at
 * the servlet's path, with named outboxes one console per name below it and an index at its root.
 * The operator is the request's authenticated user (Spring Security), and the forms carry Spring
 * Security's CSRF token when its filter set one.
 */
final class ConsoleServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    /** The request attribute under which Spring Security's CSRF filter leaves its token. */
    static final String SPRING_CSRF = "_csrf";

    private final transient Map<String, OutboxConsole> consoles;
    private final boolean single;
    private final boolean hostUsers;

    /**
     * @param consoles the console of each outbox; one entry with the key {@code ""} for the single
     *     outbox
     * @param hostUsers whether the request's authenticated user is the operator (Spring Security)
     */
    ConsoleServlet(Map<String, OutboxConsole> consoles, boolean hostUsers) {
        this.consoles = Collections.unmodifiableMap(new LinkedHashMap<>(consoles));
        this.single = consoles.size() == 1 && consoles.containsKey("");
        this.hostUsers = hostUsers;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String base = req.getContextPath() + req.getServletPath();
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        OutboxConsole console;
        if (single) {
            console = consoles.get("");
        } else {
            if (path.isEmpty() || path.equals("/")) {
                index(req, resp, base);
                return;
            }
            int slash = path.indexOf('/', 1);
            String name = slash < 0 ? path.substring(1) : path.substring(1, slash);
            console = consoles.get(name);
            if (console == null) {
                resp.sendError(404, "no outbox named " + name);
                return;
            }
            base = base + "/" + name;
            path = slash < 0 ? "" : path.substring(slash);
        }
        if (console == null) {
            resp.sendError(404);
            return;
        }
        OutboxConsole.Response r = console.handle(request(req, base, path));
        resp.setStatus(r.status());
        r.headers().forEach(resp::setHeader);
        byte[] body = r.body();
        resp.setContentLength(body.length);
        if (!req.getMethod().equals("HEAD")) {
            resp.getOutputStream().write(body);
        }
    }

    private OutboxConsole.Request request(HttpServletRequest req, String base, String path) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : Collections.list(req.getHeaderNames())) {
            String value = req.getHeader(name);
            if (value != null) {
                headers.put(name, value);
            }
        }
        Map<String, List<String>> query = OutboxConsole.parameters(req.getQueryString());
        Map<String, List<String>> form = new LinkedHashMap<>();
        if (req.getMethod().equals("POST")) {
            // The body's parameters (a filter may have read the body already): those not in the
            // query.
            req.getParameterMap()
                    .forEach(
                            (name, values) -> {
                                List<String> all = new ArrayList<>(Arrays.asList(values));
                                List<String> fromQuery = query.getOrDefault(name, List.of());
                                for (String q : fromQuery) {
                                    all.remove(q);
                                }
                                if (!all.isEmpty()) {
                                    form.put(name, all);
                                }
                            });
        }
        Optional<String> user =
                hostUsers ? Optional.ofNullable(req.getRemoteUser()) : Optional.empty();
        return new OutboxConsole.Request(
                req.getMethod(), base, path, query, form, headers, user, springCsrf(req));
    }

    /**
     * Spring Security's CSRF token as a hidden field, read without a compile-time dependency on
     * Spring Security (its {@code CsrfToken} has {@code getParameterName()} and {@code
     * getToken()}).
     */
    static Map<String, String> springCsrf(HttpServletRequest req) {
        Object token = req.getAttribute(SPRING_CSRF);
        if (token == null) {
            return Map.of();
        }
        String name = call(token, "getParameterName");
        String value = call(token, "getToken");
        return name == null || value == null ? Map.of() : Map.of(name, value);
    }

    private static @Nullable String call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            m.setAccessible(true);
            Object v = m.invoke(target);
            return v instanceof String s ? s : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private void index(HttpServletRequest req, HttpServletResponse resp, String base)
            throws IOException {
        if (!req.getMethod().equals("GET") && !req.getMethod().equals("HEAD")) {
            resp.sendError(405);
            return;
        }
        StringBuilder html =
                new StringBuilder(
                        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                                + "<title>outbox4j consoles</title></head><body><h1>Outboxes</h1><ul>");
        for (String name : consoles.keySet()) {
            html.append("<li><a href=\"")
                    .append(escape(base + "/" + name + "/"))
                    .append("\">")
                    .append(escape(name))
                    .append("</a></li>");
        }
        html.append("</ul></body></html>");
        byte[] body = html.toString().getBytes(StandardCharsets.UTF_8);
        resp.setContentType("text/html; charset=utf-8");
        resp.setHeader(
                "Content-Security-Policy",
                "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;")
                .replace("'", "&#39;");
    }
}
