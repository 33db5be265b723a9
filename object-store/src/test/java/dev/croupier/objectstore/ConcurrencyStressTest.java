package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Eight threads create, read, pin, stream, prefetch and delete objects of 1 KiB to 8 MiB in a
 * 32 MiB store that must spill; every read is checked against the CRC32C taken when the object
 * was written. Objects are shared between threads, so reads race with spills, restores and
 * deletes of other threads.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConcurrencyStressTest {

    private static final int THREADS = 8;
    private static final int OPERATIONS_PER_THREAD = 150;

    @TempDir
    Path dir;

    private record Written(long crc, long size) {
    }

    @Test
    void eightThreadsMixedOperationsKeepEveryByte() throws Exception {
        ConcurrentHashMap<ObjectId, Written> written = new ConcurrentHashMap<>();
        List<ObjectId> shared = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (ObjectStore store = ObjectStore.builder().name("stress").capacityBytes(32 << 20)
                .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(4 << 20).build()) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = 1000 + t;
                results.add(pool.submit(() -> work(store, seed, written, shared)));
            }
            int checked = 0;
            for (Future<Integer> result : results) {
                checked += result.get(100, TimeUnit.SECONDS);
            }
            assertTrue(checked > THREADS * 10, "reads checked: " + checked);
            StoreMetrics m = store.metrics();
            assertTrue(m.bytesSpilled() > 0, m.toString());
            assertTrue(m.bytesAllocated() <= m.capacityBytes(), m.toString());
            for (ObjectId id : List.copyOf(shared)) {
                Written w = written.get(id);
                if (w != null && store.contains(id)) {
                    try (PinnedObject pinned = store.get(id)) {
                        assertEquals(w.crc, crc(pinned.segment()), "object " + id);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    private static int work(ObjectStore store, long seed, ConcurrentHashMap<ObjectId, Written> written,
                            List<ObjectId> shared) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        int checked = 0;
        for (int op = 0; op < OPERATIONS_PER_THREAD; op++) {
            int kind = random.nextInt(100);
            ObjectId some = shared.isEmpty() ? null : shared.get(random.nextInt(shared.size()));
            if (kind < 40 || some == null) {
                long size = random.nextInt(10) == 0 ? random.nextLong(1 << 20, 8 << 20)
                        : random.nextLong(1 << 10, 256 << 10);
                ObjectId id = TestStores.freshId();
                try (WritableObject w = store.create(id, size)) {
                    TestStores.fill(w.segment(), id.low());
                    long crc = crc(w.segment());
                    w.seal();
                    written.put(id, new Written(crc, size));
                }
                shared.add(id);
            } else if (kind < 70) {
                try (PinnedObject pinned = store.get(some)) {
                    assertEquals(written.get(some).crc, crc(pinned.segment()), "object " + some);
                    checked++;
                } catch (ObjectNotFoundException deletedMeanwhile) {
                    // another thread deleted it: allowed
                }
            } else if (kind < 78) {
                try {
                    byte[] bytes = TestStores.readAll(store, some, 1 << 16);
                    assertEquals(written.get(some).crc, crc(MemorySegment.ofArray(bytes)), "reader " + some);
                    checked++;
                } catch (ObjectNotFoundException deletedMeanwhile) {
                    // another thread deleted it: allowed
                }
            } else if (kind < 85) {
                List<ObjectId> batch = new ArrayList<>();
                for (int i = 0; i < 4 && !shared.isEmpty(); i++) {
                    batch.add(shared.get(random.nextInt(shared.size())));
                }
                store.prefetch(batch).get(60, TimeUnit.SECONDS);
            } else {
                if (shared.remove(some)) {
                    store.delete(some);
                }
            }
        }
        return checked;
    }

    private static long crc(MemorySegment segment) {
        CRC32C crc = new CRC32C();
        crc.update(segment.asByteBuffer());
        return crc.getValue();
    }
}
