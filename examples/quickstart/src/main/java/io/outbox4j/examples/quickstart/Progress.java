package io.outbox4j.examples.quickstart;

import java.io.PrintStream;
import java.util.function.LongSupplier;

/**
 * A progress bar on stderr: redrawn in place on a terminal, a plain line every few seconds
 * otherwise.
 */
final class Progress implements AutoCloseable {
    private final PrintStream err;
    private final boolean terminal;
    private final long total;
    private final LongSupplier written;
    private final LongSupplier published;
    private final LongSupplier read;
    private final Thread thread;
    private volatile boolean running = true;

    Progress(
            PrintStream err,
            boolean terminal,
            long total,
            LongSupplier written,
            LongSupplier published,
            LongSupplier read) {
        this.err = err;
        this.terminal = terminal;
        this.total = total;
        this.written = written;
        this.published = published;
        this.read = read;
        this.thread = new Thread(this::loop, "quickstart-progress");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void loop() {
        long interval = terminal ? 200 : 2_000;
        while (running) {
            try {
                Thread.sleep(interval);
            } catch (InterruptedException e) {
                return;
            }
            draw();
        }
    }

    private void draw() {
        long w = written.getAsLong();
        long p = published.getAsLong();
        long r = read.getAsLong();
        if (terminal) {
            int width = 30;
            int filled = (int) Math.min(width, r * width / Math.max(1, total));
            err.print(
                    "\r["
                            + "#".repeat(filled)
                            + " ".repeat(width - filled)
                            + "] "
                            + (r * 100 / Math.max(1, total))
                            + "%  written "
                            + w
                            + "  published "
                            + p
                            + "  read back "
                            + r
                            + " / "
                            + total
                            + "   ");
        } else {
            err.println(
                    "progress: written "
                            + w
                            + ", published "
                            + p
                            + ", read back "
                            + r
                            + " of "
                            + total);
        }
        err.flush();
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        draw();
        if (terminal) {
            err.println();
        }
    }
}
