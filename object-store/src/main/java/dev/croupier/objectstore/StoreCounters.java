package dev.croupier.objectstore;

import java.util.Collection;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store's byte and time counters, and the {@link StoreMetrics} snapshot made of them and of
 * the objects and spill files it is shown. Owns the figures of where object bytes are (memory,
 * fallback files, only on disk), the cumulative spill, restore and compaction totals, and the
 * time spent spilling and restoring. Each method is named for the event it records.
 *
 * <p>Thread-safety: not thread-safe; guarded by the engine's lock, which every method asserts
 * is held.
 */
final class StoreCounters {

    private final ReentrantLock lock;

    private long bytesInMemory;
    private long bytesFallback;
    private long bytesOnDisk;
    private long bytesSpilled;
    private long bytesRestored;
    private long spillNanos;
    private long restoreNanos;
    private long compactedFiles;
    private long compactedBytes;

    StoreCounters(ReentrantLock lock) {
        this.lock = lock;
    }

    /** The entry's bytes were just placed, in the region or in a fallback file. */
    void placed(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (entry.offset >= 0) {
            bytesInMemory += entry.size;
        } else {
            bytesFallback += entry.size;
        }
    }

    /** The entry, spilled, was just read back and placed; its bytes leave the disk-only count. */
    void restored(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        bytesRestored += entry.size;
        bytesOnDisk -= entry.size;
        placed(entry);
    }

    /** Time spent reading objects back. */
    void restoreTook(long nanos) {
        assert lock.isHeldByCurrentThread();
        restoreNanos += nanos;
    }

    /** An object with a spill copy lost its memory copy. */
    void evicted(long size) {
        assert lock.isHeldByCurrentThread();
        bytesInMemory -= size;
        bytesOnDisk += size;
    }

    /** The entry is being freed; called before its memory, fallback file and spill copy go. */
    void freeing(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (!entry.resident() && entry.spill != null) {
            bytesOnDisk -= entry.size;
        }
        if (entry.offset >= 0) {
            bytesInMemory -= entry.size;
        }
        if (entry.fallback != null) {
            bytesFallback -= entry.size;
        }
    }

    /** An object of this size got a spill copy. */
    void spilled(long size) {
        assert lock.isHeldByCurrentThread();
        bytesSpilled += size;
    }

    /** Time spent writing one spill batch. */
    void spillTook(long nanos) {
        assert lock.isHeldByCurrentThread();
        spillNanos += nanos;
    }

    /** Compaction dropped the spill copy of a resident object of this size. */
    void compactedCopy(long size) {
        assert lock.isHeldByCurrentThread();
        compactedBytes += size;
    }

    /** Compaction deleted a spill file. */
    void compactedFile() {
        assert lock.isHeldByCurrentThread();
        compactedFiles++;
    }

    /**
     * A snapshot of the counters, with the object and file figures counted from what it is shown.
     *
     * @param allocator the region's allocator, for capacity and bytes in use
     * @param live every entry not yet freed
     * @param files the spill files on disk
     * @param queueLength allocations waiting in the queue
     * @param spillFailures spill attempts failed so far
     */
    StoreMetrics snapshot(FreeListAllocator allocator, Collection<ObjectEntry> live, Collection<SpillFile> files,
                          int queueLength, long spillFailures) {
        assert lock.isHeldByCurrentThread();
        long pinnedBytes = 0;
        int unsealed = 0;
        int inMemory = 0;
        int spilled = 0;
        int fallback = 0;
        int pinned = 0;
        for (ObjectEntry e : live) {
            if (!e.sealed) {
                unsealed++;
            }
            if (e.pins > 0 || !e.sealed) {
                pinnedBytes += e.size;
            }
            if (e.pins > 0) {
                pinned++;
            }
            if (e.sealed && e.offset >= 0) {
                inMemory++;
            }
            if (e.sealed && !e.resident() && e.spill != null) {
                spilled++;
            }
            if (e.fallback != null) {
                fallback++;
            }
        }
        long fileBytes = 0;
        for (SpillFile file : files) {
            fileBytes += file.end();
        }
        return new StoreMetrics(allocator.capacity(), bytesInMemory, allocator.used(), pinnedBytes,
                bytesOnDisk, bytesFallback, bytesSpilled, bytesRestored, fileBytes,
                unsealed, inMemory, spilled, fallback, pinned, queueLength, files.size(),
                spillNanos, restoreNanos, spillFailures, compactedFiles, compactedBytes);
    }
}
