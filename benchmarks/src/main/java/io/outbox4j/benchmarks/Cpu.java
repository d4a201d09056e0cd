package io.outbox4j.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * CPU used during a run: by this JVM, split by thread group (the relay's loop thread, its publish
 * and store pools, gruelbox's submitter and flush threads, the benchmark's main thread, other Java
 * threads, and the JVM's own GC/JIT threads as the rest), and by the PostgreSQL backends serving
 * the benchmark database (read from /proc, so only for a server on this machine; -1 otherwise). CPU
 * time is far less sensitive than wall time to other load on a shared machine.
 *
 * @param jvmNanos process CPU time of this JVM
 * @param dbNanos CPU time of the database's client backends, or -1
 * @param threads JVM CPU time by thread group, including {@code GC, JIT and VM threads}
 * @param allocatedBytes bytes allocated by the Java threads alive at the end (what drives the GC's
 *     share)
 */
record Cpu(long jvmNanos, long dbNanos, Map<String, Long> threads, long allocatedBytes) {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /**
     * Returns the CPU time a process of this machine has used so far (user + system), read from
     * {@code /proc/<pid>/stat} in clock ticks of 10 ms.
     *
     * @param pid the process
     * @return nanoseconds
     * @throws IOException if the process is gone or /proc cannot be read (not Linux)
     */
    static long processNanos(long pid) throws IOException {
        String text = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // fields after the parenthesised command: state is field 3, utime 14, stime 15
        String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ", -1);
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    }

    /**
     * Starts measuring.
     *
     * @param env the environment (for the database backends)
     * @return the meter to stop
     */
    static Meter start(Env env) {
        return new Meter(
                env, OS.getProcessCpuTime(), env.databaseCpuNanos(), threadTimes(), allocations());
    }

    /** A started measurement. */
    record Meter(
            Env env, long jvm0, long db0, Map<Long, Long> threads0, Map<Long, Long> allocated0) {
        /**
         * Stops measuring; call while the measured threads are still alive (a thread that ended is
         * not counted in its group, only in the rest).
         *
         * @return the CPU used since {@link #start}
         */
        Cpu stop() {
            long db1 = db0 < 0 ? -1 : env.databaseCpuNanos();
            long jvm = OS.getProcessCpuTime() - jvm0;
            Map<String, Long> groups = new LinkedHashMap<>();
            long java = 0;
            long[] ids = THREADS.getAllThreadIds();
            ThreadInfo[] infos = THREADS.getThreadInfo(ids);
            for (int i = 0; i < ids.length; i++) {
                long now = THREADS.getThreadCpuTime(ids[i]);
                if (infos[i] == null || now < 0) {
                    continue;
                }
                long used = Math.max(0, now - threads0.getOrDefault(ids[i], 0L));
                java += used;
                groups.merge(group(infos[i].getThreadName()), used, Long::sum);
            }
            groups.put(VM_THREADS, Math.max(0, jvm - java));
            long allocated = 0;
            for (Map.Entry<Long, Long> e : allocations().entrySet()) {
                allocated += Math.max(0, e.getValue() - allocated0.getOrDefault(e.getKey(), 0L));
            }
            return new Cpu(
                    jvm, db0 < 0 || db1 < 0 ? -1 : Math.max(0, db1 - db0), groups, allocated);
        }
    }

    private static Map<Long, Long> allocations() {
        Map<Long, Long> m = new HashMap<>();
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) {
                m.put(ids[i], bytes[i]);
            }
        }
        return m;
    }

    private static Map<Long, Long> threadTimes() {
        Map<Long, Long> m = new HashMap<>();
        for (long id : THREADS.getAllThreadIds()) {
            long t = THREADS.getThreadCpuTime(id);
            if (t >= 0) {
                m.put(id, t);
            }
        }
        return m;
    }

    /** The group of the JVM's own threads (GC, JIT, VM): the process CPU the Java threads left. */
    static final String VM_THREADS = "GC, JIT and VM threads";

    /**
     * A group of threads: its name in reports, its key in the JSON figures, and the names of its
     * threads.
     */
    private record Group(String name, String key, Pattern threads) {
        Group(String name, String key, String threads) {
            this(name, key, Pattern.compile(threads));
        }
    }

    /**
     * The groups, the first whose pattern matches a thread's whole name taking it. The engine names
     * its threads outbox4j-relay-(owner)[-publish-N|-store-N|-batch-N].
     */
    private static final List<Group> GROUPS =
            List.of(
                    new Group(
                            "relay publish pool", "publish_pool", "outbox4j-relay-.*-publish-\\d+"),
                    new Group(
                            "relay store-write pool",
                            "store_write_pool",
                            "outbox4j-relay-.*-store-\\d+"),
                    new Group("relay batch threads", "relay_batch", "outbox4j-relay-.*-batch-\\d+"),
                    new Group("relay loop thread", "relay_loop", "outbox4j-relay-.*"),
                    new Group(
                            "KafkaPublisher send threads",
                            "kafka_publisher_send",
                            "outbox4j-kafka-.*"),
                    new Group(
                            "Kafka producer I/O threads",
                            "kafka_producer_io",
                            "kafka-producer-network-thread.*"),
                    new Group("benchmark main thread", "main", "main"),
                    new Group(
                            "load generator (committing threads)",
                            "load_generator",
                            "pool-\\d+-thread-\\d+"),
                    new Group("hand-written poller thread", "poller", "bench-poller"),
                    new Group(
                            "competent hand-written workers",
                            "competent_workers",
                            "bench-competent-.*"),
                    new Group(
                            "namastack processing pool", "namastack_processing", "outbox-proc-.*"),
                    new Group(
                            "namastack scheduler and heartbeat",
                            "namastack_scheduler",
                            "outbox-(scheduler|heartbeat)-.*"),
                    new Group(
                            "gruelbox submitter pool", "gruelbox_submitter", "gruelbox-submit-.*"),
                    new Group("gruelbox flush thread", "gruelbox_flush", "gruelbox-flush"));

    /** The group of the Java threads no other group takes. */
    private static final String OTHER_THREADS =
            "other Java threads (an in-JVM Kafka broker's among them)";

    /**
     * Returns the short key of a group for the JSON figures.
     *
     * @param group a group name from {@link #group} or {@link #VM_THREADS}
     * @return a stable identifier
     */
    static String key(String group) {
        if (group.equals(VM_THREADS)) {
            return "gc_jit_vm";
        }
        return GROUPS.stream()
                .filter(g -> g.name().equals(group))
                .findFirst()
                .map(Group::key)
                .orElse("other_java");
    }

    /**
     * Names a thread's group.
     *
     * @param name the thread's name
     * @return the group's name
     */
    static String group(String name) {
        return GROUPS.stream()
                .filter(g -> g.threads().matcher(name).matches())
                .findFirst()
                .map(Group::name)
                .orElse(OTHER_THREADS);
    }
}
