package io.outbox4j.console;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A small web console over one outbox: server-rendered HTML pages showing the backlog per topic and
 * state, blocked keys, relays and members, and the dead letters page by page, with replay and
 * discard behind an explicit confirmation (docs/console.md).
 *
 * <p>The console knows no HTTP server: a host (the standalone relay, the Spring Boot starter) turns
 * each HTTP request under the console's base path into a {@link Request} and writes the {@link
 * Response} back. Pages hold no script; every value from the store (topics, keys, reasons) is
 * escaped, and every response forbids scripts and framing through its {@code
 * Content-Security-Policy}.
 *
 * <p><b>Security.</b> The console is read-only unless {@link Builder#writeEnabled(boolean) write
 * actions} are enabled, and shows no payload or header value unless {@link
 * Builder#payloadsEnabled(boolean) payloads} are enabled and the operator asks for one message's.
 * Both need an authenticated operator: either HTTP Basic credentials the console checks itself
 * ({@link Builder#basicAuthentication}, which then guards every page), or the host's own
 * authentication ({@link Builder#hostAuthentication()}, the operator named by {@link
 * Request#user()}). Writes are POST only and carry a synchronizer token bound to the operator; a
 * request whose {@code Origin} or {@code Sec-Fetch-Site} says it comes from another site is
 * refused.
 *
 * <pre>{@code
 * OutboxConsole console = OutboxConsole.builder(admin)
 *         .basicAuthentication("operator", secret)
 *         .writeEnabled(true)
 *         .build();
 * OutboxConsole.Response r = console.handle(request);
 * }</pre>
 *
 * <p>Thread-safe: one console serves concurrent requests.
 */
public final class OutboxConsole {
    /** The HTTP realm of Basic authentication. */
    public static final String REALM = "outbox4j console";

    /** The default number of dead letters per page. */
    public static final int DEFAULT_PAGE_SIZE = 50;

    private final Pages pages;

    private OutboxConsole(Builder b) {
        this.pages = new Pages(b);
    }

    /**
     * Starts a console over an outbox's admin port.
     *
     * @param admin the store's admin port
     * @return a builder; read-only and without authentication unless configured
     */
    public static Builder builder(OutboxAdmin admin) {
        if (admin == null) {
            throw new IllegalArgumentException("admin must not be null");
        }
        return new Builder(admin);
    }

    /**
     * Answers one request. Never throws for bad input: a failing store answers 500 with the
     * failure's class and message (escaped), bad parameters answer 400.
     *
     * @param request the request, its path relative to the console's base path
     * @return the response to send
     */
    public Response handle(Request request) {
        return pages.handle(request);
    }

    /**
     * Whether write actions (replay, discard) are enabled. They still need an authenticated
     * operator.
     *
     * @return {@code true} if enabled
     */
    public boolean writeEnabled() {
        return pages.writeEnabled();
    }

    /**
     * Decodes {@code application/x-www-form-urlencoded} text (a query string or a form body) into
     * parameters, keeping their order and repeats. Malformed escapes are kept as they are.
     *
     * @param encoded the text, may be empty
     * @return name to values
     */
    public static Map<String, List<String>> parameters(@Nullable String encoded) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (encoded == null || encoded.isEmpty()) {
            return out;
        }
        int start = 0;
        while (start <= encoded.length()) {
            int end = encoded.indexOf('&', start);
            if (end < 0) {
                end = encoded.length();
            }
            String pair = encoded.substring(start, end);
            start = end + 1;
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            out.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
        }
        return out;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    /**
     * One HTTP request as the console sees it.
     *
     * @param method the HTTP method, e.g. {@code GET}
     * @param basePath where the console is mounted, without a trailing slash (e.g. {@code
     *     /console}); links and redirects start with it
     * @param path the path below {@code basePath}: {@code /}, {@code /dead-letters}…; empty for the
     *     base path itself (answered with a redirect to {@code basePath + "/"})
     * @param query the query parameters
     * @param form the parameters of an {@code application/x-www-form-urlencoded} body (empty for
     *     other bodies)
     * @param headers the request headers, one value each; names are matched case-insensitively
     * @param user the operator the host authenticated, for {@link Builder#hostAuthentication()};
     *     empty when anonymous
     * @param formFields hidden fields every form of the page must carry besides the console's own,
     *     for the host's filters (e.g. Spring Security's CSRF token)
     */
    public record Request(
            String method,
            String basePath,
            String path,
            Map<String, List<String>> query,
            Map<String, List<String>> form,
            Map<String, String> headers,
            Optional<String> user,
            Map<String, String> formFields) {
        /**
         * A request whose forms need no hidden field of the host's.
         *
         * @param method the method
         * @param basePath the base path
         * @param path the path
         * @param query the query
         * @param form the form
         * @param headers the headers
         * @param user the user
         */
        public Request(
                String method,
                String basePath,
                String path,
                Map<String, List<String>> query,
                Map<String, List<String>> form,
                Map<String, String> headers,
                Optional<String> user) {
            this(method, basePath, path, query, form, headers, user, Map.of());
        }

        /**
         * Validates and copies; header names become lower case.
         *
         * @param method the method
         * @param basePath the base path
         * @param path the path
         * @param query the query
         * @param form the form
         * @param headers the headers
         * @param user the user
         * @param formFields the host's hidden form fields
         */
        public Request {
            if (method == null || basePath == null || path == null || user == null) {
                throw new IllegalArgumentException(
                        "method, basePath, path and user must not be null");
            }
            method = method.toUpperCase(Locale.ROOT);
            query = copy(query);
            form = copy(form);
            Map<String, String> h = new TreeMap<>();
            if (headers != null) {
                headers.forEach(
                        (k, v) -> {
                            if (k != null && v != null) {
                                h.put(k.toLowerCase(Locale.ROOT), v);
                            }
                        });
            }
            headers = Collections.unmodifiableMap(h);
            formFields =
                    formFields == null
                            ? Map.of()
                            : Collections.unmodifiableMap(new LinkedHashMap<>(formFields));
        }

        /**
         * A header's value.
         *
         * @param name the header name, any case
         * @return its value, empty if absent
         */
        public Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
        }

        private static Map<String, List<String>> copy(@Nullable Map<String, List<String>> params) {
            Map<String, List<String>> out = new LinkedHashMap<>();
            if (params != null) {
                params.forEach(
                        (k, v) -> {
                            if (k != null && v != null) {
                                out.put(k, v.stream().filter(java.util.Objects::nonNull).toList());
                            }
                        });
            }
            return Collections.unmodifiableMap(out);
        }
    }

    /** The answer to one request: status, headers and a UTF-8 body. Immutable. */
    public static final class Response {
        private final int status;
        private final Map<String, String> headers;
        private final byte[] body;

        /**
         * Copies.
         *
         * @param status the HTTP status
         * @param headers the response headers (content type, security headers, location…)
         * @param body the body, UTF-8
         */
        public Response(int status, Map<String, String> headers, byte[] body) {
            this.status = status;
            this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
            this.body = body.clone();
        }

        /**
         * The HTTP status.
         *
         * @return e.g. 200
         */
        public int status() {
            return status;
        }

        /**
         * The response headers.
         *
         * @return name to value, in sending order
         */
        public Map<String, String> headers() {
            return headers;
        }

        /**
         * The body.
         *
         * @return a copy of the body
         */
        public byte[] body() {
            return body.clone();
        }

        /**
         * The body as text.
         *
         * @return the UTF-8 body
         */
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "Response[status=" + status + ", " + body.length + " bytes]";
        }
    }

    /**
     * What the host knows about a relay it runs, for the relays section of the overview (the
     * members the store records come from {@link Builder#membership(OutboxMembership)}).
     *
     * @param name the relay's name (its owner id)
     * @param state its state, e.g. {@code RUNNING}
     * @param details further facts in display order (last claim, publishing, buckets…)
     */
    public record RelayStatus(String name, String state, Map<String, String> details) {
        /**
         * Copies.
         *
         * @param name the name
         * @param state the state
         * @param details the details
         */
        public RelayStatus {
            if (name == null || state == null) {
                throw new IllegalArgumentException("name and state must not be null");
            }
            details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
        }
    }

    /** Configures a console. */
    public static final class Builder {
        final OutboxAdmin admin;
        @Nullable OutboxMembership membership;
        Supplier<List<RelayStatus>> relays = List::of;
        boolean writeEnabled;
        boolean payloadsEnabled;
        @Nullable String basicUser;
        @Nullable String basicPassword;
        boolean hostAuthentication;
        Clock clock = Clock.systemUTC();
        int pageSize = DEFAULT_PAGE_SIZE;
        String title = "outbox4j";
        byte[] secret;

        private Builder(OutboxAdmin admin) {
            this.admin = admin;
            this.secret = new byte[32];
            new SecureRandom().nextBytes(secret);
            if (admin instanceof OutboxMembership m) {
                this.membership = m;
            }
        }

        /**
         * The membership port to list members and buckets from; by default the admin port itself
         * when the store implements both.
         *
         * @param membership the store's membership port, or null for none
         * @return this builder
         */
        public Builder membership(@Nullable OutboxMembership membership) {
            this.membership = membership;
            return this;
        }

        /**
         * The relays the host runs, read at every overview page.
         *
         * @param relays supplies their status now
         * @return this builder
         */
        public Builder relays(Supplier<List<RelayStatus>> relays) {
            this.relays = nonNull(relays, "relays");
            return this;
        }

        /**
         * Enables replay and discard ({@code false} by default). Needs an authentication.
         *
         * @param enabled whether write actions are offered
         * @return this builder
         */
        public Builder writeEnabled(boolean enabled) {
            this.writeEnabled = enabled;
            return this;
        }

        /**
         * Lets an authenticated operator ask for one message's payload and header values ({@code
         * false} by default). Needs an authentication.
         *
         * @param enabled whether payloads can be shown
         * @return this builder
         */
        public Builder payloadsEnabled(boolean enabled) {
            this.payloadsEnabled = enabled;
            return this;
        }

        /**
         * Guards every page with HTTP Basic authentication the console checks itself.
         *
         * @param user the operator's user name (no colon)
         * @param password the password (at least 8 characters)
         * @return this builder
         * @throws IllegalArgumentException if the user name is blank or has a colon, or the
         *     password is shorter than 8 characters
         */
        public Builder basicAuthentication(String user, String password) {
            if (user == null || user.isBlank() || user.indexOf(':') >= 0) {
                throw new IllegalArgumentException(
                        "the console user must not be blank nor contain ':'");
            }
            if (password == null || password.length() < 8) {
                throw new IllegalArgumentException(
                        "the console password must have at least 8 characters");
            }
            this.basicUser = user;
            this.basicPassword = password;
            this.hostAuthentication = false;
            return this;
        }

        /**
         * Trusts the host's authentication: the operator is {@link Request#user()}, and requests
         * without one are anonymous (they may read, never write nor see payloads).
         *
         * @return this builder
         */
        public Builder hostAuthentication() {
            this.hostAuthentication = true;
            this.basicUser = null;
            this.basicPassword = null;
            return this;
        }

        /**
         * The clock the statistics are judged at.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = nonNull(clock, "clock");
            return this;
        }

        /**
         * Dead letters per page.
         *
         * @param size 1 to 500
         * @return this builder
         */
        public Builder pageSize(int size) {
            if (size < 1 || size > 500) {
                throw new IllegalArgumentException(
                        "page size must be between 1 and 500, but was " + size);
            }
            this.pageSize = size;
            return this;
        }

        /**
         * The name shown in the page titles, e.g. the outbox's name.
         *
         * @param title the title
         * @return this builder
         */
        public Builder title(String title) {
            this.title = nonNull(title, "title");
            return this;
        }

        /**
         * Builds the console.
         *
         * @return the console
         * @throws IllegalStateException if write actions or payloads are enabled without an
         *     authentication
         */
        public OutboxConsole build() {
            if ((writeEnabled || payloadsEnabled) && basicUser == null && !hostAuthentication) {
                throw new IllegalStateException(
                        "the console's "
                                + (writeEnabled ? "write actions" : "payload view")
                                + " need an authentication: configure a user and password (or the host's"
                                + " authentication)");
            }
            return new OutboxConsole(this);
        }

        private static <T> T nonNull(@Nullable T value, String name) {
            if (value == null) {
                throw new IllegalArgumentException(name + " must not be null");
            }
            return value;
        }
    }
}
