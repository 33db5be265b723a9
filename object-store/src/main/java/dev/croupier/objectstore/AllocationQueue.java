package dev.croupier.objectstore;

import java.io.IOException;
import java.nio.file.Path;
import java.util.PriorityQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admission of memory allocations: the priority queue of waiting requests (task outputs before
 * prefetches, FIFO within a priority; only the head allocates), the region blocks they are
 * given, the evictions that make room for them, and the fallback files a task output gets when
 * memory cannot be had. Owns the queue, its byte count and the fallback file numbering.
 *
 * <p>Thread-safety: not thread-safe; guarded by the engine's lock, which every method asserts
 * is held. {@link #allocate} waits on the engine's condition, releasing the lock meanwhile.
 */
final class AllocationQueue {

    /** The store's log, named for the engine as it was before the engine was split. */
    private static final System.Logger LOG = System.getLogger(StoreEngine.class.getName());

    private final StoreEngine engine;
    private final ReentrantLock lock;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;
    private final StoreDirectories dirs;

    private final PriorityQueue<Request> queue = new PriorityQueue<>();
    private long requestSeq;
    /** Block bytes the waiting requests ask for. */
    private long queuedBytes;
    private long fallbackSeq;

    private record Request(Priority priority, long seq, long size) implements Comparable<Request> {
        @Override
        public int compareTo(Request o) {
            int c = priority.compareTo(o.priority);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    AllocationQueue(StoreEngine engine, MemoryRegion region, StoreDirectories dirs) {
        this.engine = engine;
        this.lock = engine.lock;
        this.region = region;
        this.allocator = region.allocator();
        this.dirs = dirs;
    }

    /**
     * Waits in the queue for a region block. Returns its offset, or -1 if no block can be had
     * without waiting forever (the caller falls back or gives up).
     */
    long allocate(long size, Priority priority) throws InterruptedException {
        assert lock.isHeldByCurrentThread();
        long block = FreeListAllocator.blockSize(size);
        if (block > allocator.capacity()) {
            return -1;
        }
        Request request = new Request(priority, requestSeq++, size);
        long failuresAtStart = engine.spiller.failures();
        queue.add(request);
        queuedBytes += block;
        engine.spiller.retry();
        try {
            while (true) {
                engine.checkOpen();
                if (queue.peek() == request) {
                    long offset = allocateReserved(size);
                    while (offset < 0) {
                        ObjectEntry victim = engine.idle.evictionVictim(priority);
                        if (victim == null) {
                            break;
                        }
                        evict(victim);
                        offset = allocateReserved(size);
                    }
                    if (offset >= 0) {
                        return offset;
                    }
                    if (engine.spiller.failures() > failuresAtStart) {
                        throw engine.spiller.lastFailure();
                    }
                    if (!engine.idle.hasSpillCandidates() && engine.spiller.spillingBytes() == 0) {
                        return -1;
                    }
                    engine.spiller.wake();
                }
                engine.changed.await();
            }
        } finally {
            queue.remove(request);
            queuedBytes -= block;
            engine.changed.signalAll();
        }
    }

    /**
     * A block of the region whose bytes have real blocks in the memory folder, or -1. The region
     * grows as its highest block does; when the folder is full it stops growing, and what was
     * not reserved is given up (the store then holds less and spills sooner).
     */
    private long allocateReserved(long size) {
        assert lock.isHeldByCurrentThread();
        long offset = allocator.allocate(size);
        if (offset >= 0 && !region.reserveTo(offset + FreeListAllocator.blockSize(size))) {
            allocator.free(offset, size);
            allocator.retire(region.reserved());
            LOG.log(System.Logger.Level.WARNING, "store '" + engine.name
                    + "': its memory folder is full at " + region.reserved() + " bytes ("
                    + region.full().getMessage() + "); it keeps that much and spills the rest");
            offset = allocator.allocate(size);
        }
        return offset;
    }

    /** Drops the memory copy of an object that has a spill copy. */
    private void evict(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        engine.idle.makeBusy(entry);
        engine.releaseRegionBytes(entry);
        engine.counters.evicted(entry.size);
    }

    /** A new fallback file for the entry's bytes, in the spill directory. */
    FallbackFile newFallback(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        Path file = dirs.spillDir().resolve("fallback-" + entry.id + "-" + (fallbackSeq++) + ".obj");
        try {
            return new FallbackFile(file, entry.size);
        } catch (IOException e) {
            throw new SpillFailedException(engine.name, dirs.spillDir(), entry.size, e);
        }
    }

    /** True if some allocation waits. */
    boolean waiting() {
        assert lock.isHeldByCurrentThread();
        return !queue.isEmpty();
    }

    /** Allocations waiting. */
    int length() {
        assert lock.isHeldByCurrentThread();
        return queue.size();
    }

    /** Block bytes the waiting allocations ask for. */
    long queuedBytes() {
        assert lock.isHeldByCurrentThread();
        return queuedBytes;
    }
}
