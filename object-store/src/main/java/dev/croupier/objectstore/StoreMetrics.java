package dev.croupier.objectstore;

/**
 * A snapshot of a store's counters, taken under the store's lock so the figures agree with each
 * other. Cumulative counters ({@code Total}) only grow during the store's life.
 *
 * <p>Thread-safety: immutable value.
 *
 * @param capacityBytes the store's hard memory capacity
 * @param bytesInMemory object bytes held in the memory region (sealed or being written)
 * @param bytesAllocated region bytes in use, including alignment padding; never above capacity
 * @param bytesPinned bytes of objects currently pinned by readers or being written
 * @param bytesOnDisk live object bytes held only in spill files (uncompressed size)
 * @param bytesFallback bytes of objects allocated in fallback files because memory was full
 * @param bytesSpilled cumulative object bytes written to spill files
 * @param bytesRestored cumulative object bytes read back from spill files
 * @param spillFileBytes bytes in spill files on disk (live and dead, after compression)
 * @param objectsUnsealed objects created but not sealed yet
 * @param objectsInMemory sealed objects resident in the memory region
 * @param objectsSpilled sealed objects held only in spill files
 * @param objectsFallback objects living in fallback files
 * @param objectsPinned objects with at least one reader pin
 * @param queueLength allocations waiting in the allocation queue
 * @param spillFiles spill files on disk
 * @param spillNanos cumulative time spent writing spill files
 * @param restoreNanos cumulative time spent reading objects back
 * @param spillFailures spill attempts that failed (for example on a full disk)
 * @param compactedFiles mostly dead spill files deleted by compaction
 * @param compactedBytes bytes of live objects whose spill copy compaction dropped (to be
 *     written again, into a newer file, only if memory runs short)
 */
public record StoreMetrics(
        long capacityBytes,
        long bytesInMemory,
        long bytesAllocated,
        long bytesPinned,
        long bytesOnDisk,
        long bytesFallback,
        long bytesSpilled,
        long bytesRestored,
        long spillFileBytes,
        int objectsUnsealed,
        int objectsInMemory,
        int objectsSpilled,
        int objectsFallback,
        int objectsPinned,
        int queueLength,
        int spillFiles,
        long spillNanos,
        long restoreNanos,
        long spillFailures,
        long compactedFiles,
        long compactedBytes) {

    /**
     * Returns the average spill write throughput so far.
     *
     * @return bytes per second written while spilling, 0 before the first spill
     */
    public double spillBytesPerSecond() {
        return spillNanos == 0 ? 0 : bytesSpilled * 1e9 / spillNanos;
    }

    /**
     * Returns the average restore read throughput so far.
     *
     * @return bytes per second read while restoring, 0 before the first restore
     */
    public double restoreBytesPerSecond() {
        return restoreNanos == 0 ? 0 : bytesRestored * 1e9 / restoreNanos;
    }
}
