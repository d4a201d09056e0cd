package io.outbox4j.faulttests;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A store that passes every call to another and keeps a journal of the leases the relay above it
 * holds: a lease starts when a claim returns it and ends when a complete, release, dead-letter or
 * abandon of it returns (whether it changed the row or found the receipt stale). So a test can name
 * the messages a relay had leased at the moment it was killed, closed or cut off from the broker.
 *
 * <p>The journal lives in memory, and for a relay in a child JVM also in an append-only file
 * ({@link #toFile}), one line per event, written straight to the operating system so that it
 * survives {@code kill -9}: {@code C<TAB>receipt<TAB>id}, {@code F<TAB>receipt}, {@code R} once the
 * relay is running ({@link #ready()}), and {@code M+} / {@code M-} before and after each membership
 * renewal (so a test can freeze a member while it is inside one: {@link ChildRelay#inRenewal()}).
 *
 * <p>It passes the membership port ({@link OutboxMembership}) through to a store that has one, so a
 * relay over it can be a member of the outbox (the relay looks for the port on the store it is
 * given); over a store without one, membership calls throw {@link UnsupportedOperationException}.
 */
public final class LeaseJournal implements OutboxStore, OutboxMembership {
    private final OutboxStore delegate;
    private final Map<String, String> live = new ConcurrentHashMap<>();
    private final AtomicLong claimed = new AtomicLong();
    private final @Nullable FileChannel file;

    private LeaseJournal(OutboxStore delegate, @Nullable FileChannel file) {
        this.delegate = delegate;
        this.file = file;
    }

    /**
     * Journals the leases of a relay in this JVM.
     *
     * @param delegate the real store
     * @return the journaling store to give the relay
     */
    public static LeaseJournal inMemory(OutboxStore delegate) {
        return new LeaseJournal(delegate, null);
    }

    /**
     * Journals the leases in memory and in an append-only file (created or appended to).
     *
     * @param delegate the real store
     * @param path the journal file
     * @return the journaling store to give the relay
     */
    public static LeaseJournal toFile(OutboxStore delegate, Path path) {
        try {
            return new LeaseJournal(
                    delegate,
                    FileChannel.open(
                            path,
                            StandardOpenOption.CREATE,
                            StandardOpenOption.WRITE,
                            StandardOpenOption.APPEND));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the lease journal " + path, e);
        }
    }

    /**
     * What a journal says at one moment.
     *
     * @param ready whether the relay said it is running (file journals only)
     * @param claimed how many deliveries the relay claimed so far
     * @param leasedIds the ids of the messages it holds a lease on
     */
    public record Snapshot(boolean ready, long claimed, Set<String> leasedIds) {}

    /** The journal of this JVM's relay now. */
    public Snapshot snapshot() {
        return new Snapshot(true, claimed.get(), Set.copyOf(live.values()));
    }

    /**
     * Reads a journal file; a last line cut short (the writer was killed mid-write) is ignored.
     *
     * @param path the journal file
     * @return what it says; empty if the file does not exist yet
     */
    public static Snapshot read(Path path) {
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new Snapshot(false, 0, Set.of());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the lease journal " + path, e);
        }
        boolean ready = false;
        long claims = 0;
        Map<String, String> held = new HashMap<>();
        int end = text.lastIndexOf('\n');
        if (end < 0) {
            return new Snapshot(false, 0, Set.of());
        }
        for (String line : text.substring(0, end).split("\n", -1)) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "R" -> ready = true;
                case "C" -> {
                    if (f.length == 3) {
                        held.put(f[1], f[2]);
                        claims++;
                    }
                }
                case "F" -> {
                    if (f.length == 2) {
                        held.remove(f[1]);
                    }
                }
                default -> {
                    // an unknown or empty line: ignored
                }
            }
        }
        return new Snapshot(ready, claims, new HashSet<>(held.values()));
    }

    /** Writes the "relay is running" line. */
    public void ready() {
        append("R\n");
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        List<Delivery> deliveries = delegate.claim(request);
        if (!deliveries.isEmpty()) {
            StringBuilder lines = new StringBuilder();
            for (Delivery d : deliveries) {
                live.put(d.receipt(), d.message().id());
                lines.append("C\t").append(d.receipt()).append('\t').append(d.message().id());
                lines.append('\n');
            }
            claimed.addAndGet(deliveries.size());
            append(lines.toString());
        }
        return deliveries;
    }

    @Override
    public Set<String> complete(Completion completion) {
        return finished(completion.receipts(), delegate.complete(completion));
    }

    @Override
    public boolean release(Release release) {
        return finished(List.of(release.receipt()), delegate.release(release));
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        return finished(List.of(deadLetter.receipt()), delegate.deadLetter(deadLetter));
    }

    @Override
    public Set<String> extend(Extension extension) {
        return delegate.extend(extension);
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        return finished(abandonment.receipts(), delegate.abandon(abandonment));
    }

    @Override
    public Membership renew(String member, Duration lease) {
        append("M+\n");
        try {
            return membership().renew(member, lease);
        } finally {
            append("M-\n");
        }
    }

    @Override
    public void leave(String member) {
        membership().leave(member);
    }

    @Override
    public List<Member> members() {
        return membership().members();
    }

    private OutboxMembership membership() {
        if (delegate instanceof OutboxMembership m) {
            return m;
        }
        throw new UnsupportedOperationException(delegate + " has no membership");
    }

    /**
     * The relay holds none of these leases any more, whether the write changed them or found them
     * stale (then someone else holds the message).
     */
    /** Journals the end of these leases, once the store call that ended them has returned. */
    private <T> T finished(Collection<String> receipts, T answer) {
        StringBuilder lines = new StringBuilder();
        for (String r : receipts) {
            live.remove(r);
            lines.append("F\t").append(r).append('\n');
        }
        if (lines.length() > 0) {
            append(lines.toString());
        }
        return answer;
    }

    private void append(String lines) {
        if (file == null) {
            return;
        }
        ByteBuffer buffer = ByteBuffer.wrap(lines.getBytes(StandardCharsets.UTF_8));
        synchronized (file) {
            try {
                while (buffer.hasRemaining()) {
                    file.write(buffer);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the lease journal", e);
            }
        }
    }

    @Override
    public String toString() {
        return "LeaseJournal[" + delegate + "]";
    }
}
