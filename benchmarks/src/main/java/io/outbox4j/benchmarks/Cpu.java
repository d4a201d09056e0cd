package io.outbox4j.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

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
            groups.put("GC, JIT and VM threads", Math.max(0, jvm - java));
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

    /**
     * Returns the short key of a group for the JSON figures.
     *
     * @param group a group name from {@link #group} or the GC/JIT/VM rest
     * @return a stable identifier
     */
    static String key(String group) {
        return switch (group) {
            case "relay loop thread" -> "relay_loop";
            case "relay batch threads" -> "relay_batch";
            case "relay publish pool" -> "publish_pool";
            case "relay store-write pool" -> "store_write_pool";
            case "KafkaPublisher send threads" -> "kafka_publisher_send";
            case "Kafka producer I/O threads" -> "kafka_producer_io";
            case "benchmark main thread" -> "main";
            case "load generator (committing threads)" -> "load_generator";
            case "hand-written poller thread" -> "poller";
            case "competent hand-written workers" -> "competent_workers";
            case "namastack processing pool" -> "namastack_processing";
            case "namastack scheduler and heartbeat" -> "namastack_scheduler";
            case "gruelbox submitter pool" -> "gruelbox_submitter";
            case "gruelbox flush thread" -> "gruelbox_flush";
            case "GC, JIT and VM threads" -> "gc_jit_vm";
            default -> "other_java";
        };
    }

    /**
     * Names a thread's group: the engine names its threads
     * outbox4j-relay-(owner)[-publish-N|-store-N|-batch-N].
     */
    static String group(String name) {
        if (name.startsWith("outbox4j-relay-")) {
            if (name.matches(".*-publish-\\d+")) {
                return "relay publish pool";
            }
            if (name.matches(".*-store-\\d+")) {
                return "relay store-write pool";
            }
            if (name.matches(".*-batch-\\d+")) {
                return "relay batch threads";
            }
            return "relay loop thread";
        }
        if (name.startsWith("outbox4j-kafka-")) {
            return "KafkaPublisher send threads";
        }
        if (name.startsWith("kafka-producer-network-thread")) {
            return "Kafka producer I/O threads";
        }
        if (name.equals("main")) {
            return "benchmark main thread";
        }
        if (name.matches("pool-\\d+-thread-\\d+")) {
            return "load generator (committing threads)";
        }
        if (name.equals("bench-poller")) {
            return "hand-written poller thread";
        }
        if (name.startsWith("bench-competent-")) {
            return "competent hand-written workers";
        }
        if (name.startsWith("outbox-proc-")) {
            return "namastack processing pool";
        }
        if (name.startsWith("outbox-scheduler-") || name.startsWith("outbox-heartbeat-")) {
            return "namastack scheduler and heartbeat";
        }
        if (name.startsWith("gruelbox-submit-")) {
            return "gruelbox submitter pool";
        }
        if (name.equals("gruelbox-flush")) {
            return "gruelbox flush thread";
        }
        return "other Java threads (an in-JVM Kafka broker's among them)";
    }
}
