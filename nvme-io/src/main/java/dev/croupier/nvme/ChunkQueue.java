package dev.croupier.nvme;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The chunks of published fills, handed to the reading threads of either engine one at a time,
 * with the counters they keep.
 *
 * <p>Design note: no lock on the per-chunk path. Fills wait in a FIFO queue, a semaphore holds
 * one permit per unclaimed chunk, and a thread that holds a permit claims the next chunk of the
 * oldest fill with an atomic increment, dropping fills it finds exhausted. Thread-safe.
 */
final class ChunkQueue {
    private final ConcurrentLinkedQueue<Workspace.Fill> fills = new ConcurrentLinkedQueue<>();
    private final Semaphore unclaimed = new Semaphore(0);
    final LongAdder bytesRead = new LongAdder();
    final LongAdder reads = new LongAdder();

    /** Publishes a planned fill; its chunks become claimable at once. */
    void publish(Workspace.Fill fill) {
        fills.add(fill);
        unclaimed.release(fill.chunkCount);
    }

    /** Waits for a permit: an unclaimed chunk, or a wake-up from {@link #wake}. */
    void acquire() {
        unclaimed.acquireUninterruptibly();
    }

    /** Takes a permit if one is free at once. */
    boolean tryAcquire() {
        return unclaimed.tryAcquire();
    }

    /** Hands out {@code permits} permits without chunks, so waiting threads see a shutdown. */
    void wake(int permits) {
        unclaimed.release(permits);
    }

    /**
     * Claims the next chunk (the caller holds a permit) and plans its read into {@code read}.
     * A chunk of a fill that already failed is not read: it is counted down at once and this
     * returns false.
     */
    boolean claimInto(ChunkRead read) {
        while (true) {
            Workspace.Fill fill = fills.peek();
            int chunk = fill.nextChunk.getAndIncrement();
            if (chunk < fill.chunkCount) {
                if (fill.failure != null) {
                    fill.done.countDown();
                    return false;
                }
                read.plan(fill, chunk);
                return true;
            }
            fills.remove(fill);
        }
    }

    /** Each fill still queued. */
    void forEachFill(Consumer<Workspace.Fill> action) {
        fills.forEach(action);
    }
}
