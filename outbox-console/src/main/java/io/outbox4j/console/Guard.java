package io.outbox4j.console;

import io.outbox4j.console.OutboxConsole.Request;
import io.outbox4j.console.OutboxConsole.Response;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * Who is asking, and whether a write comes from the console's own pages.
 *
 * <ul>
 *   <li><b>Authentication</b>: HTTP Basic checked here (every page then needs it), or the host's
 *       (the operator is {@link Request#user()}), or none (anonymous readers only).
 *   <li><b>CSRF</b>: a write carries a synchronizer token, an HMAC of the operator's name under a
 *       secret drawn when the console starts, which only the console's own pages contain; and a
 *       request whose {@code Origin} names another host, or whose {@code Sec-Fetch-Site} is {@code
 *       cross-site} or {@code same-site}, is refused before the token is looked at.
 * </ul>
 */
final class Guard {
    private final byte @Nullable [] expectedBasic;
    private final @Nullable String basicUser;
    private final boolean host;
    private final SecretKeySpec key;

    Guard(@Nullable String basicUser, @Nullable String basicPassword, boolean host, byte[] secret) {
        this.basicUser = basicUser;
        this.expectedBasic =
                basicUser == null || basicPassword == null
                        ? null
                        : (basicUser + ":" + basicPassword).getBytes(StandardCharsets.UTF_8);
        this.host = host;
        this.key = new SecretKeySpec(secret.clone(), "HmacSHA256");
    }

    /**
     * A 401 asking for Basic credentials when they are configured and a page request lacks them; a
     * 403 for any other method without them.
     */
    Optional<Response> challenge(Request r) {
        byte[] expected = expectedBasic;
        if (expected == null) {
            return Optional.empty();
        }
        Optional<byte[]> given = r.header("Authorization").flatMap(Guard::basic);
        if (given.isPresent() && MessageDigest.isEqual(given.get(), expected)) {
            return Optional.empty();
        }
        Map<String, String> headers = Pages.headers("text/plain; charset=utf-8");
        if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
            // No challenge for a write: a browser must not ask for a password and then send the
            // write again with it. Writes come from pages loaded with the credentials.
            return Optional.of(
                    new Response(
                            403,
                            headers,
                            "Write actions need the console's user and password.\n"
                                    .getBytes(StandardCharsets.UTF_8)));
        }
        headers.put(
                "WWW-Authenticate",
                "Basic realm=\"" + OutboxConsole.REALM + "\", charset=\"UTF-8\"");
        return Optional.of(
                new Response(
                        401,
                        headers,
                        "The outbox4j console needs a user and password.\n"
                                .getBytes(StandardCharsets.UTF_8)));
    }

    private static Optional<byte[]> basic(String header) {
        if (!header.regionMatches(true, 0, "Basic ", 0, 6)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Base64.getDecoder().decode(header.substring(6).strip()));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The authenticated operator of a request that passed {@link #challenge}. */
    Optional<String> user(Request r) {
        if (basicUser != null) {
            return Optional.of(basicUser);
        }
        return host ? r.user().filter(u -> !u.isBlank()) : Optional.empty();
    }

    /** The synchronizer token of an operator's forms. */
    String token(String user) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            byte[] sig =
                    mac.doFinal(
                            ("outbox4j-console-csrf\n" + user).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(sig);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no HmacSHA256", e);
        }
    }

    void checkToken(Request r, String user) {
        String given = Pages.first(r.form(), "csrf");
        byte[] expected = token(user).getBytes(StandardCharsets.US_ASCII);
        if (given.isEmpty()
                || !MessageDigest.isEqual(given.getBytes(StandardCharsets.US_ASCII), expected)) {
            throw new Pages.Refusal(
                    403,
                    "The form is out of date or did not come from this console: load the page again.");
        }
    }

    void checkSameSite(Request r) {
        Optional<String> site = r.header("Sec-Fetch-Site").map(s -> s.toLowerCase(Locale.ROOT));
        if (site.isPresent()
                && (site.get().equals("cross-site") || site.get().equals("same-site"))) {
            throw new Pages.Refusal(403, "Write actions are refused from other sites.");
        }
        Optional<String> origin = r.header("Origin");
        if (origin.isEmpty()) {
            return; // older clients; the token still guards
        }
        String authority = authority(origin.get());
        boolean same =
                authority != null
                        && (authority.equalsIgnoreCase(r.header("Host").orElse(""))
                                || authority.equalsIgnoreCase(
                                        r.header("X-Forwarded-Host").orElse("")));
        if (!same) {
            throw new Pages.Refusal(403, "Write actions are refused from other origins.");
        }
    }

    /** {@code host:port} of an origin (the port only when the origin names one). */
    private static @Nullable String authority(String origin) {
        try {
            URI u = URI.create(origin.strip());
            return u.getRawAuthority();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
