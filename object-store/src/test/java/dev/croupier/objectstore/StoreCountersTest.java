package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/** The counters seam of the store engine: events move bytes between places, and only under the lock. */
class StoreCountersTest {

    private final ReentrantLock lock = new ReentrantLock();
    private final StoreCounters counters = new StoreCounters(lock);
    private final FreeListAllocator allocator = new FreeListAllocator(1 << 20);

    @Test
    void anObjectsBytesAreCountedInOnePlaceThroughSpillEvictRestoreAndFree() {
        ObjectEntry entry = new ObjectEntry(ObjectId.of(1, 2), 1000);
        lock.lock();
        try {
            entry.offset = 0;
            counters.placed(entry);
            assertPlaces(1000, 0);
            counters.spilled(entry.size);
            counters.spillTook(5);
            counters.evicted(entry.size);
            entry.offset = -1;
            assertPlaces(0, 1000);
            entry.offset = 4096;
            counters.restored(entry);
            counters.restoreTook(7);
            assertPlaces(1000, 0);
            counters.freeing(entry);
            assertPlaces(0, 0);

            StoreMetrics m = counters.snapshot(allocator, List.of(), List.of(), 0, 0);
            assertEquals(1000, m.bytesSpilled());
            assertEquals(1000, m.bytesRestored());
            assertEquals(5, m.spillNanos());
            assertEquals(7, m.restoreNanos());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aCounterChangedWithoutTheEnginesLockFailsItsAssertion() {
        ObjectEntry entry = new ObjectEntry(ObjectId.of(1, 3), 10);
        assertThrows(AssertionError.class, () -> counters.placed(entry));
        assertThrows(AssertionError.class, () -> counters.snapshot(allocator, List.of(), List.of(), 0, 0));
    }

    private void assertPlaces(long inMemory, long onDisk) {
        StoreMetrics m = counters.snapshot(allocator, List.of(), List.of(), 0, 0);
        assertEquals(inMemory, m.bytesInMemory(), "bytes in memory");
        assertEquals(onDisk, m.bytesOnDisk(), "bytes on disk");
        assertEquals(0, m.bytesFallback(), "bytes in fallback files");
    }
}
