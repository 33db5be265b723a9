package dev.croupier.nvme;

import java.util.concurrent.TimeUnit;

/**
 * What reads the chunks of published fills: {@link ChunkReaders} (threads blocked in
 * {@code pread}) or {@link AioReaders} (Linux native AIO). Both take their chunks from one
 * {@link ChunkQueue} and count into it. The consumer thread calls {@link #submit} and
 * {@link #close}; the counters may be read from any thread.
 */
abstract class ReadEngine implements AutoCloseable {

    private static final long JOIN_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(30);

    /** The chunks to read and the counters of what was read. */
    final ChunkQueue queue = new ChunkQueue();
    /** Set by {@link #close}; the engine's threads stop taking chunks once they see it. */
    volatile boolean closed;
    private Thread[] threads = new Thread[0];

    /** Starts the engine's threads (daemons), which run until {@link #close}. */
    final void start(Thread[] engineThreads) {
        this.threads = engineThreads;
        for (Thread t : engineThreads) {
            t.start();
        }
    }

    /** Publishes a planned fill; its chunks become claimable at once. */
    void submit(Workspace.Fill fill) {
        queue.publish(fill);
    }

    /** Bytes read so far, alignment padding included. */
    final long bytesRead() {
        return queue.bytesRead.sum();
    }

    /** Reads completed so far. */
    final long reads() {
        return queue.reads.sum();
    }

    /** Which engine this is. */
    abstract IoEngine engine();

    /**
     * Stops reading after the reads in flight and waits for the threads: one permit each, so a
     * thread blocked waiting for a chunk wakes and sees {@link #closed}.
     */
    @Override
    public final void close() {
        closed = true;
        queue.wake(threads.length);
        for (Thread t : threads) {
            try {
                t.join(JOIN_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
