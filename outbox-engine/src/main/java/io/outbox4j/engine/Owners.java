package io.outbox4j.engine;

import java.net.InetAddress;
import java.util.concurrent.ThreadLocalRandom;

/** The default owner name: {@code <host>-<pid>-<random>}. */
final class Owners {
    private Owners() {}

    static String defaultOwner() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "localhost";
            }
        }
        String clean = host.replaceAll("[^A-Za-z0-9._-]", "-");
        if (clean.length() > 200) {
            clean = clean.substring(0, 200);
        }
        String random = Integer.toHexString(ThreadLocalRandom.current().nextInt() | 0x10000000);
        return clean + "-" + ProcessHandle.current().pid() + "-" + random;
    }
}
