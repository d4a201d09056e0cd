package io.outbox4j.kafka.connect;

/** Keeps secrets out of messages and logs. */
final class Redact {
    private Redact() {}

    /**
     * Returns a JDBC URL without its query and user info, where drivers accept passwords (e.g.
     * {@code ?password=...}, {@code //user:pw@host}).
     */
    static String url(String url) {
        String out = url;
        int q = out.indexOf('?');
        if (q >= 0) {
            out = out.substring(0, q) + "?...";
        }
        int scheme = out.indexOf("//");
        int at = out.indexOf('@', scheme < 0 ? 0 : scheme);
        if (scheme >= 0 && at > scheme) {
            int slash = out.indexOf('/', scheme + 2);
            if (slash < 0 || at < slash) {
                out = out.substring(0, scheme + 2) + "***" + out.substring(at);
            }
        }
        return out;
    }
}
