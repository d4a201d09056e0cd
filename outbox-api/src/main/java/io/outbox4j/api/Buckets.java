package io.outbox4j.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The key space of an outbox, split into {@value #COUNT} buckets, and how buckets are spread over
 * the relays that share the outbox (docs/scale-out.md).
 *
 * <p><b>A key's bucket</b> is the first byte of the MD5 digest of the key's UTF-8 bytes, read as an
 * unsigned number (0 to 255). Every store computes it the same way, and the SQL stores let the
 * database compute it for every row (a generated column), so a writer of the table in any language
 * needs nothing: PostgreSQL {@code get_byte(decode(md5(msg_key), 'hex'), 0)}, MariaDB/MySQL {@code
 * CONV(LEFT(MD5(msg_key), 2), 16, 10)}. MD5 is used as a well-spread function every database has,
 * not for security. A message without a key belongs to no bucket.
 *
 * <p><b>Who owns a bucket</b> among the live members of an outbox is decided by rendezvous hashing:
 * the member with the highest {@link #score(String, int)} for the bucket, ties broken by the
 * smaller member id. Every member and every store computes the same assignment from the same set of
 * members, and a member joining or leaving moves only about {@code 1/R} of the buckets.
 */
public final class Buckets {
    /** The number of buckets of every outbox. */
    public static final int COUNT = 256;

    private static final ThreadLocal<MessageDigest> MD5 =
            ThreadLocal.withInitial(
                    () -> {
                        try {
                            return MessageDigest.getInstance("MD5");
                        } catch (NoSuchAlgorithmException e) {
                            throw new IllegalStateException("this JVM has no MD5 digest", e);
                        }
                    });

    private Buckets() {}

    /**
     * The bucket of a key.
     *
     * @param key a message key
     * @return 0 to {@value #COUNT} - 1
     */
    public static int of(String key) {
        Checks.notNull(key, "key");
        byte[] digest = MD5.get().digest(key.getBytes(StandardCharsets.UTF_8));
        return digest[0] & 0xff;
    }

    /**
     * The rendezvous score of a member for a bucket: FNV-1a (64 bit) over the member id's UTF-8
     * bytes, then the bucket number times {@code 0x9E3779B97F4A7C15} added and mixed by the
     * SplitMix64 finaliser; compared as signed 64-bit numbers.
     *
     * @param member a member id
     * @param bucket 0 to {@value #COUNT} - 1
     * @return the score; the highest live member wins the bucket
     */
    public static long score(String member, int bucket) {
        long h = 0xcbf29ce484222325L;
        for (byte b : member.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        long z = h + bucket * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Spreads every bucket over the given members by rendezvous hashing.
     *
     * @param members the live members (at least one)
     * @return for each member, the buckets it owns in ascending order; every bucket appears once
     * @throws IllegalArgumentException if there is no member
     */
    public static Map<String, List<Integer>> assign(Collection<String> members) {
        Checks.notNull(members, "members");
        TreeSet<String> sorted = new TreeSet<>(members);
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("members must not be empty");
        }
        Map<String, List<Integer>> owned = new TreeMap<>();
        for (String m : sorted) {
            owned.put(m, new ArrayList<>());
        }
        for (int bucket = 0; bucket < COUNT; bucket++) {
            owned.computeIfAbsent(owner(bucket, sorted), m -> new ArrayList<>()).add(bucket);
        }
        return owned;
    }

    /**
     * The member that owns a bucket.
     *
     * @param bucket 0 to {@value #COUNT} - 1
     * @param members the live members (at least one)
     * @return the member with the highest score, the smallest id among equal scores
     */
    public static String owner(int bucket, Collection<String> members) {
        if (bucket < 0 || bucket >= COUNT) {
            throw new IllegalArgumentException(
                    "bucket must be 0 to " + (COUNT - 1) + ", but was " + bucket);
        }
        @Nullable String best = null;
        long bestScore = 0;
        for (String m : members) {
            long s = score(Checks.notNull(m, "member"), bucket);
            if (best == null || s > bestScore || (s == bestScore && m.compareTo(best) < 0)) {
                best = m;
                bestScore = s;
            }
        }
        if (best == null) {
            throw new IllegalArgumentException("members must not be empty");
        }
        return best;
    }
}
