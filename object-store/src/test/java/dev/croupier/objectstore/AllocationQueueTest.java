package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With memory full of pinned objects nothing can be spilled: a task output falls back to disk
 * and a get of a spilled object restores into a fallback file (both make progress), while a
 * prefetch, the lower priority, gives up and leaves the object on disk.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocationQueueTest {

    private static final int OBJECT = 100_000;

    @TempDir
    Path dir;

    @Test
    void whenEverythingIsPinnedTaskOutputsFallBackAndPrefetchesGiveUp() throws Exception {
        try (ObjectStore store = ObjectStore.builder().name("queue").capacityBytes(1 << 20)
                .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(256 << 10).build()) {
            List<ObjectId> old = SpillAndRestoreTest.putMany(store, 20);
            store.awaitSpillIdle();
            List<ObjectId> spilled = new ArrayList<>();
            List<PinnedObject> pins = new ArrayList<>();
            for (ObjectId id : old) {
                if (store.describe(id).file().getFileName().toString().startsWith("spill-")) {
                    spilled.add(id);
                }
            }
            assertTrue(spilled.size() >= 2, "some objects must be spilled: " + store.metrics());
            // pin fresh objects until the region is full of pinned bytes
            for (int i = 0; i < 12; i++) {
                ObjectId id = TestStores.freshId();
                try (WritableObject w = store.create(id, OBJECT)) {
                    TestStores.fill(w.segment(), 1000 + i);
                    w.seal();
                }
                pins.add(store.get(id));
            }
            for (ObjectId id : old) {
                if (!spilled.contains(id) && store.describe(id).file().getFileName().toString().equals(MemoryRegion.FILE_NAME)) {
                    pins.add(store.get(id));
                }
            }
            StoreMetrics full = store.metrics();

            store.prefetch(spilled.subList(0, 1)).get(30, TimeUnit.SECONDS);
            assertEquals(full.bytesRestored(), store.metrics().bytesRestored(), "prefetch must give up");
            assertTrue(store.describe(spilled.get(0)).file().getFileName().toString().startsWith("spill-"));

            ObjectId output = TestStores.freshId();
            try (WritableObject w = store.create(output, OBJECT, Priority.TASK_OUTPUT)) {
                TestStores.fill(w.segment(), 77);
                w.seal();
            }
            assertTrue(store.describe(output).file().getFileName().toString().startsWith("fallback-"),
                    store.metrics().toString());

            int index = old.indexOf(spilled.get(1));
            try (PinnedObject restored = store.get(spilled.get(1))) {
                assertEquals(-1, TestStores.firstMismatch(restored.segment(), index));
                assertTrue(store.describe(spilled.get(1)).file().getFileName().toString().startsWith("fallback-"));
            }
            try (PinnedObject out = store.get(output)) {
                assertEquals(-1, TestStores.firstMismatch(out.segment(), 77));
            }
            assertTrue(store.metrics().bytesAllocated() <= store.metrics().capacityBytes());
            for (PinnedObject p : pins) {
                p.close();
            }
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    /**
     * A prefetch-priority allocation waits first, a task output arrives second; when room for
     * one object appears, the task output gets it and the prefetch keeps waiting. The spill
     * thread is held at its gate so that only the test frees memory.
     */
    @Test
    void taskOutputsAreServedBeforePrefetchesThatWaitedLonger() throws Exception {
        Semaphore gate = new Semaphore(0);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (ObjectStore store = ObjectStore.builder().name("queue-order").capacityBytes(1 << 20)
                .memoryDirectory(dir).spillDirectory(dir).spillGate(gate).build()) {
            try {
                List<ObjectId> resident = new ArrayList<>();
                for (int i = 0; i < 9; i++) {
                    resident.add(store.put(TestStores.freshId(), java.lang.foreign.MemorySegment.ofArray(new byte[OBJECT])));
                }
                store.put(TestStores.freshId(), java.lang.foreign.MemorySegment.ofArray(new byte[60_000]));
                // 960,320 of 1,048,576 bytes used: a 100,000-byte object does not fit

                Future<WritableObject> prefetch = threads.submit(() -> store.create(TestStores.freshId(), OBJECT,
                        Priority.PREFETCH));
                awaitQueueLength(store, 1);
                Future<WritableObject> task = threads.submit(() -> store.create(TestStores.freshId(), OBJECT,
                        Priority.TASK_OUTPUT));
                awaitQueueLength(store, 2);

                // the newest objects: the oldest are held by the gated spill batch, their free would wait
                assertTrue(store.delete(resident.get(8))); // room for exactly one more object
                try (WritableObject served = task.get(30, TimeUnit.SECONDS)) {
                    served.seal();
                }
                assertFalse(prefetch.isDone(), "the prefetch must still wait");
                assertEquals(1, store.metrics().queueLength());

                assertTrue(store.delete(resident.get(7)));
                try (WritableObject later = prefetch.get(30, TimeUnit.SECONDS)) {
                    later.seal();
                }
                assertEquals(0, store.metrics().queueLength());
            } finally {
                gate.release(1_000_000);
            }
        } finally {
            threads.shutdownNow();
            assertTrue(threads.awaitTermination(30, TimeUnit.SECONDS));
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    /** Waits (bounded) until the allocation queue holds {@code n} requests. */
    private static void awaitQueueLength(ObjectStore store, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (store.metrics().queueLength() != n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("queue never reached " + n + ": " + store.metrics());
            }
            Thread.sleep(5);
        }
    }
    /**
     * Regression: an allocation that waited for the spill thread to spill an idle object was
     * never woken when that object got pinned before the spill thread reached it. The spill
     * thread found nothing to spill and slept; the allocation, told of nothing, waited for
     * the pin to go instead of falling back to disk (a node stalled this way in a sort under a
     * node kill, its task waiting for memory held by its own arguments). Racy by nature, so
     * many rounds: before the fix most of them hung.
     */
    @Test
    void anAllocationWhoseSpillCandidateGetsPinnedFallsBackInsteadOfWaiting() throws Exception {
        ExecutorService allocator = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 100; round++) {
                try (ObjectStore store = ObjectStore.builder().name("race").capacityBytes(1 << 20)
                        .memoryDirectory(dir).spillDirectory(dir).build()) {
                    ObjectId idle = TestStores.freshId();
                    try (WritableObject w = store.create(idle, 700_000)) {
                        w.seal();
                    }
                    Future<?> output = allocator.submit(() -> {
                        try (WritableObject w = store.create(TestStores.freshId(), 500_000)) {
                            w.seal();
                        }
                        return null;
                    });
                    while (store.metrics().queueLength() == 0 && !output.isDone()) {
                        Thread.onSpinWait();
                    }
                    try (PinnedObject pinned = store.get(idle)) {
                        output.get(10, TimeUnit.SECONDS); // must not need the pin to go
                    }
                }
            }
        } finally {
            allocator.shutdownNow();
        }
    }
}
