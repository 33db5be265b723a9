package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpillAndRestoreTest {

    private static final long CAPACITY = 1 << 20;
    private static final int OBJECT = 100_000;

    @TempDir
    Path dir;

    private ObjectStore store(Compression compression) {
        return ObjectStore.builder().name("spill-" + compression).capacityBytes(CAPACITY)
                .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(256 << 10).compression(compression).build();
    }

    /** Writes 4 MiB through a 1 MiB store; every object must read back intact. */
    @ParameterizedTest
    @EnumSource(Compression.class)
    void objectsSpillWhenMemoryIsFullAndRestoreIntact(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 40);
            StoreMetrics m = store.metrics();
            assertTrue(m.bytesAllocated() <= m.capacityBytes());
            assertTrue(m.objectsSpilled() > 0, m.toString());
            assertEquals(0, m.bytesFallback(), m.toString());
            assertTrue(m.spillFiles() >= 1, m.toString());
            for (int i = 0; i < ids.size(); i++) {
                try (PinnedObject pinned = store.get(ids.get(i))) {
                    assertEquals(-1, TestStores.firstMismatch(pinned.segment(), i), "object " + i);
                }
            }
            assertTrue(store.metrics().bytesRestored() > 0);
            assertTrue(store.metrics().bytesAllocated() <= CAPACITY);
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    /** Raw spilled objects are read from their spill file in ranges; LZ4 ones are restored first. */
    @ParameterizedTest
    @EnumSource(Compression.class)
    void aReaderReadsSpilledObjectsWithoutRestoringRawOnes(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 30);
            long restoredBefore = store.metrics().bytesRestored();
            int fromSpill = 0;
            for (int i = 0; i < ids.size(); i++) {
                try (ObjectReader reader = store.openReader(ids.get(i))) {
                    fromSpill += reader.inMemory() ? 0 : 1;
                }
                byte[] bytes = TestStores.readAll(store, ids.get(i), 7_000 + i * 1_001);
                assertEquals(OBJECT, bytes.length);
                assertEquals(-1, TestStores.firstMismatch(MemorySegment.ofArray(bytes), i), "object " + i);
            }
            if (compression == Compression.NONE) {
                assertTrue(fromSpill > 0, "some objects were spilled and read from their spill file");
                assertEquals(restoredBefore, store.metrics().bytesRestored(), "reading a raw spilled object must not restore it");
            } else {
                assertTrue(store.metrics().bytesRestored() > restoredBefore, "LZ4 objects are restored to be read");
            }
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    /** A reader's pin keeps the spill copy alive through a delete; the store frees it at close. */
    @ParameterizedTest
    @EnumSource(Compression.class)
    void aDeletedObjectStaysReadableUntilItsReaderCloses(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 30);
            try (ObjectReader reader = store.openReader(ids.get(0))) {
                assertTrue(store.delete(ids.get(0)));
                putManyFrom(store, 20, 30); // more spilling and compaction while the reader holds its pin
                byte[] bytes = new byte[OBJECT];
                MemorySegment.copy(reader.read(0, OBJECT), 0, MemorySegment.ofArray(bytes), 0, OBJECT);
                assertEquals(-1, TestStores.firstMismatch(MemorySegment.ofArray(bytes), 0));
            }
            assertFalse(store.contains(ids.get(0)));
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void prefetchRestoresInTheBackground(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 30);
            List<ObjectId> first = ids.subList(0, 3);
            store.prefetch(first).get(30, TimeUnit.SECONDS);
            StoreMetrics afterPrefetch = store.metrics();
            assertTrue(afterPrefetch.bytesRestored() >= 3L * OBJECT, afterPrefetch.toString());
            for (int i = 0; i < first.size(); i++) {
                try (PinnedObject pinned = store.get(first.get(i))) {
                    assertEquals(-1, TestStores.firstMismatch(pinned.segment(), i));
                }
            }
            assertEquals(afterPrefetch.bytesRestored(), store.metrics().bytesRestored(), "get found them in memory");
            store.prefetch(List.of(TestStores.freshId())).get(30, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void deletingEveryObjectDeletesTheSpillFiles(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 40);
            Path spillDir = dir.resolve("croupier-store-" + store.name());
            assertTrue(spillFiles(spillDir) > 1);
            for (ObjectId id : ids) {
                assertTrue(store.delete(id));
            }
            store.awaitSpillIdle();
            StoreMetrics m = store.metrics();
            assertEquals(0, m.bytesInMemory(), m.toString());
            assertEquals(0, m.bytesOnDisk(), m.toString());
            assertTrue(spillFiles(spillDir) <= 1, "only the file being appended may remain: " + m);
            List<SpillLog.Entry> log = SpillLog.readAll(spillDir);
            long spilled = log.stream().filter(e -> e.kind() == SpillLog.SPILLED).count();
            long dead = log.stream().filter(e -> e.kind() == SpillLog.DEAD).count();
            assertTrue(spilled > 0);
            assertEquals(spilled, dead, "every spilled copy is logged dead once its object is deleted");
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void spillLogLocatesEverySpilledObject(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 20);
            Path spillDir = dir.resolve("croupier-store-" + store.name());
            for (SpillLog.Entry e : SpillLog.readAll(spillDir)) {
                if (e.kind() == SpillLog.SPILLED) {
                    assertTrue(ids.contains(e.id()));
                    assertEquals(OBJECT, e.rawLength());
                    assertEquals(compression, e.compression());
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void describeOfASpilledRawObjectPointsIntoItsSpillFile(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 30);
            ObjectId oldest = ids.get(0);
            assertTrue(store.metrics().objectsSpilled() > 0);
            if (compression == Compression.LZ4) {
                assertThrows(ObjectStoreException.class, () -> store.describe(oldest));
                return;
            }
            ObjectLocation location = store.describe(oldest);
            assertTrue(location.file().getFileName().toString().startsWith("spill-"), location.toString());
            byte[] bytes = new byte[OBJECT];
            try (var channel = java.nio.channels.FileChannel.open(location.file())) {
                channel.read(java.nio.ByteBuffer.wrap(bytes), location.offset());
            }
            assertEquals(-1, TestStores.firstMismatch(MemorySegment.ofArray(bytes), 0));
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void pinnedObjectsAreNeverSpilledAndDeletedPinnedObjectsSurvive(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 2);
            PinnedObject pinned = store.get(ids.get(0));
            MemorySegment before = pinned.segment();
            assertTrue(store.delete(ids.get(0)));
            putManyFrom(store, 30, 2);
            assertEquals(-1, TestStores.firstMismatch(before, 0));
            pinned.close();
            assertFalse(store.contains(ids.get(0)));
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void prefetchFuturesCompleteWhenTheStoreCloses(Compression compression) throws Exception {
        java.util.concurrent.CompletableFuture<Void> pending;
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 40);
            pending = store.prefetch(ids);
        }
        pending.get(30, TimeUnit.SECONDS);
        assertEquals(0, TestStores.countFiles(dir));
    }

    /**
     * Regression: a reader interrupted while it reads a spill file (a node kill interrupts its
     * workers, which may be reading a neighbour's store) closed the file's shared channel, and
     * every later restore from that file failed with ClosedChannelException.
     */
    @ParameterizedTest
    @EnumSource(Compression.class)
    void anInterruptedReaderDoesNotBreakTheSpillFileForOthers(Compression compression) throws Exception {
        try (ObjectStore store = store(compression)) {
            List<ObjectId> ids = putMany(store, 40);
            Thread interrupted = Thread.ofPlatform().unstarted(() -> {
                Thread.currentThread().interrupt();
                for (int i = 0; i < 8; i++) {
                    ObjectId id = ids.get(i);
                    try {
                        TestStores.readAll(store, id, 1 << 20);
                    } catch (Exception expected) {
                        // an interrupted read fails; what matters is the next readers
                    }
                    try (PinnedObject pinned = store.get(id)) {
                        pinned.segment();
                    } catch (Exception expected) {
                        // likewise
                    }
                    Thread.currentThread().interrupt();
                }
            });
            interrupted.start();
            interrupted.join();
            for (int i = 0; i < ids.size(); i++) {
                byte[] bytes = TestStores.readAll(store, ids.get(i), 1 << 20);
                assertEquals(-1, TestStores.firstMismatch(MemorySegment.ofArray(bytes), i), "object " + i);
                try (PinnedObject pinned = store.get(ids.get(i))) {
                    assertEquals(-1, TestStores.firstMismatch(pinned.segment(), i), "object " + i);
                }
            }
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    static List<ObjectId> putMany(ObjectStore store, int count) throws InterruptedException {
        return putManyFrom(store, count, 0);
    }

    static List<ObjectId> putManyFrom(ObjectStore store, int count, int firstSeed) throws InterruptedException {
        List<ObjectId> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ObjectId id = TestStores.freshId();
            try (WritableObject w = store.create(id, OBJECT)) {
                TestStores.fill(w.segment(), firstSeed + i);
                w.seal();
            }
            ids.add(id);
        }
        return ids;
    }

    private static long spillFiles(Path spillDir) throws Exception {
        try (Stream<Path> files = Files.list(spillDir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("spill-0")).count();
        }
    }
}
