package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Closed spill files that are mostly dead are compacted away; the objects that lived there stay intact. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactionTest {

    private static final int OBJECT = 20_000;
    private static final int COUNT = 300;
    private static final int KEEP_EVERY = 8;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(Compression.class)
    void mostlyDeadSpillFilesAreDeletedAndTheirLiveObjectsSurvive(Compression compression) throws Exception {
        try (ObjectStore store = ObjectStore.builder().name("compact-" + compression).capacityBytes(1 << 20)
                .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(256 << 10).compression(compression).build()) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i = 0; i < COUNT; i++) {
                ObjectId id = TestStores.freshId();
                try (WritableObject w = store.create(id, OBJECT)) {
                    w.segment().fill((byte) 0);
                    TestStores.fill(w.segment(), i);
                    w.seal();
                }
                ids.add(id);
            }
            StoreMetrics before = store.metrics();
            assertTrue(before.spillFiles() >= 10, before.toString());

            for (int i = 0; i < COUNT; i++) {
                if (i % KEEP_EVERY != 0) {
                    store.delete(ids.get(i));
                }
            }
            // Compaction runs on the spill thread; give it a bounded while to finish its rounds.
            StoreMetrics after = store.metrics();
            for (int wait = 0; wait < 400 && after.spillFiles() >= before.spillFiles() / 2; wait++) {
                Thread.sleep(25);
                after = store.metrics();
            }
            assertTrue(after.compactedFiles() > 0, after.toString());
            assertTrue(after.spillFiles() < before.spillFiles() / 2, before.spillFiles() + " files before, " + after);
            assertTrue(after.spillFileBytes() < before.spillFileBytes() / 2, after.toString());
            assertTrue(after.bytesAllocated() <= after.capacityBytes());

            for (int i = 0; i < COUNT; i += KEEP_EVERY) {
                try (PinnedObject pinned = store.get(ids.get(i))) {
                    MemorySegment bytes = pinned.segment();
                    assertEquals(OBJECT, bytes.byteSize());
                    assertEquals(-1, TestStores.firstMismatch(bytes, i), "object " + i);
                }
            }
        }
        assertEquals(0, TestStores.countFiles(dir));
    }
}
