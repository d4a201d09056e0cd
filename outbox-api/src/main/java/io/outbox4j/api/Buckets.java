package io.outbox4j.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

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
 * <p><b>Who owns a bucket</b> among the live members of an outbox is decided by rendezvous hashing
 * with bounded loads ({@link #assign}): every (member, bucket) pair has a {@link #score(String,
 * int)}, and buckets go to their highest-scoring member unless that member already owns its share,
 * {@code ceil(256 / R)} of {@code R} members. So no member owns more than its share (pure
 * rendezvous hashing gave 112 and 144 buckets to two members, 58 to 71 to four, which caps what
 * more relays can add), every member and every store computes the same assignment from the same set
 * of members, and a member joining or leaving moves about {@code 1/R} of the buckets (1.1 to 1.25
 * times that for up to 8 members).
 */
@Incubating
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
     * @return the score; a bucket goes to the highest-scoring live member that still has room
     *     ({@link #assign})
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
     * Spreads every bucket over the given members: rendezvous hashing with bounded loads. The pairs
     * (member, bucket) are taken in descending {@link #score(String, int)} order (ties: the smaller
     * member id, then the smaller bucket), and each gives the bucket to the member unless the
     * bucket already has an owner or the member already owns {@code ceil(256 / R)} buckets.
     *
     * @param members the live members (at least one)
     * @return for each member, the buckets it owns in ascending order; every bucket appears once,
     *     and no member owns more than {@code ceil(256 / R)}
     * @throws IllegalArgumentException if there is no member, or a member is null
     */
    public static Map<String, List<Integer>> assign(Collection<String> members) {
        Checks.notNull(members, "members");
        TreeSet<String> sorted = new TreeSet<>();
        for (String m : members) {
            sorted.add(Checks.notNull(m, "member"));
        }
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("members must not be empty");
        }
        int share = (COUNT + sorted.size() - 1) / sorted.size();
        List<Preference> preferences = new ArrayList<>(COUNT * sorted.size());
        for (String m : sorted) {
            for (int bucket = 0; bucket < COUNT; bucket++) {
                preferences.add(new Preference(score(m, bucket), m, bucket));
            }
        }
        preferences.sort(Preference.ORDER);
        Map<String, List<Integer>> owned = new TreeMap<>();
        for (String m : sorted) {
            owned.put(m, new ArrayList<>());
        }
        boolean[] taken = new boolean[COUNT];
        int assigned = 0;
        for (Preference p : preferences) {
            List<Integer> mine = owned.get(p.member());
            if (taken[p.bucket()] || mine == null || mine.size() >= share) {
                continue;
            }
            taken[p.bucket()] = true;
            mine.add(p.bucket());
            if (++assigned == COUNT) {
                break;
            }
        }
        owned.values().forEach(Collections::sort);
        return owned;
    }

    /** One member's claim on one bucket, by score. */
    private record Preference(long score, String member, int bucket) {
        static final Comparator<Preference> ORDER =
                Comparator.comparingLong(Preference::score)
                        .reversed()
                        .thenComparing(Preference::member)
                        .thenComparingInt(Preference::bucket);
    }

    /**
     * The member that owns a bucket: {@link #assign}'s owner of it.
     *
     * @param bucket 0 to {@value #COUNT} - 1
     * @param members the live members (at least one)
     * @return the member {@link #assign} gives the bucket to
     * @throws IllegalArgumentException if the bucket is out of range or there is no member
     */
    public static String owner(int bucket, Collection<String> members) {
        if (bucket < 0 || bucket >= COUNT) {
            throw new IllegalArgumentException(
                    "bucket must be 0 to " + (COUNT - 1) + ", but was " + bucket);
        }
        for (Map.Entry<String, List<Integer>> e : assign(members).entrySet()) {
            if (e.getValue().contains(bucket)) {
                return e.getKey();
            }
        }
        throw new IllegalStateException("bucket " + bucket + " has no owner"); // every one has
    }
}
