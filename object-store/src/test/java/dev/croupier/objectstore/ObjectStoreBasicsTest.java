package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ObjectStoreBasicsTest {

    @TempDir
    Path dir;

    private ObjectStore store(long capacity) {
        return ObjectStore.builder().name("basics").capacityBytes(capacity)
                .memoryDirectory(dir).spillDirectory(dir).build();
    }

    @Test
    void putThenGetReturnsTheSameBytesReadOnly() throws Exception {
        try (ObjectStore store = store(1 << 20); Arena arena = Arena.ofConfined()) {
            ObjectId id = TestStores.freshId();
            store.put(id, TestStores.bytes(arena, 10_000, 7));
            assertTrue(store.contains(id));
            assertEquals(10_000, store.sizeOf(id));
            try (PinnedObject pinned = store.get(id)) {
                assertEquals(10_000, pinned.size());
                assertEquals(-1, TestStores.firstMismatch(pinned.segment(), 7));
                assertTrue(pinned.segment().isReadOnly());
                assertThrows(IllegalArgumentException.class,
                        () -> pinned.segment().set(ValueLayout.JAVA_BYTE, 0, (byte) 1));
            }
        }
    }

    @Test
    void zeroSizeObjectsWork() throws Exception {
        try (ObjectStore store = store(1 << 20)) {
            ObjectId id = TestStores.freshId();
            try (WritableObject w = store.create(id, 0)) {
                assertEquals(0, w.segment().byteSize());
                w.seal();
            }
            try (PinnedObject pinned = store.get(id)) {
                assertEquals(0, pinned.size());
                assertEquals(0, pinned.segment().byteSize());
            }
            assertTrue(store.delete(id));
            assertFalse(store.contains(id));
        }
    }

    @Test
    void unsealedObjectsAreInvisibleAndAbortFreesThem() throws Exception {
        try (ObjectStore store = store(1 << 20)) {
            ObjectId id = TestStores.freshId();
            try (WritableObject w = store.create(id, 1000)) {
                assertFalse(store.contains(id));
                ObjectNotFoundException e = assertThrows(ObjectNotFoundException.class, () -> store.get(id));
                assertTrue(e.getMessage().contains(id.toString()) && e.getMessage().contains("basics"), e.getMessage());
                assertEquals(1000, store.metrics().bytesInMemory());
                assertEquals(id, w.id());
            }
            assertEquals(0, store.metrics().bytesInMemory());
            assertFalse(store.contains(id));
        }
    }

    @Test
    void aClosedStoreSaysSoWithItsOwnTypeAndName() throws Exception {
        ObjectStore store = store(1 << 20);
        ObjectId id = TestStores.freshId();
        try (WritableObject w = store.create(id, 8)) {
            w.seal();
        }
        store.close();
        StoreClosedException e = assertThrows(StoreClosedException.class, () -> store.get(id));
        assertTrue(e.getMessage().contains("'basics'"), e.getMessage());
        assertThrows(StoreClosedException.class, () -> store.create(TestStores.freshId(), 8));
    }

    @Test
    void missingObjectsGiveTypedErrorsNamingTheIdAndStore() {
        try (ObjectStore store = store(1 << 20)) {
            ObjectId id = new ObjectId(1, 2);
            ObjectNotFoundException e = assertThrows(ObjectNotFoundException.class, () -> store.get(id));
            assertTrue(e.getMessage().contains("00000000000000010000000000000002"), e.getMessage());
            assertTrue(e.getMessage().contains("'basics'"), e.getMessage());
            assertEquals(id, e.id());
            assertThrows(ObjectNotFoundException.class, () -> store.sizeOf(id));
            assertFalse(store.delete(id));
        }
    }

    @Test
    void creatingAnExistingIdFails() throws Exception {
        try (ObjectStore store = store(1 << 20); Arena arena = Arena.ofConfined()) {
            ObjectId id = TestStores.freshId();
            store.put(id, TestStores.bytes(arena, 10, 1));
            assertThrows(ObjectExistsException.class, () -> store.create(id, 10));
            assertTrue(store.delete(id));
            store.put(id, TestStores.bytes(arena, 20, 2));
            assertEquals(20, store.sizeOf(id));
        }
    }

    @Test
    void deletingAPinnedObjectDefersTheFree() throws Exception {
        try (ObjectStore store = store(1 << 20); Arena arena = Arena.ofConfined()) {
            ObjectId id = TestStores.freshId();
            store.put(id, TestStores.bytes(arena, 4096, 3));
            PinnedObject pinned = store.get(id);
            assertTrue(store.delete(id));
            assertFalse(store.contains(id));
            assertEquals(4096, store.metrics().bytesInMemory());
            assertEquals(-1, TestStores.firstMismatch(pinned.segment(), 3));
            pinned.close();
            pinned.close();
            assertEquals(0, store.metrics().bytesInMemory());
            assertEquals(0, store.metrics().bytesAllocated());
        }
    }

    @Test
    void objectLargerThanCapacityGoesToAFallbackFile() throws Exception {
        try (ObjectStore store = store(64 << 10); Arena arena = Arena.ofConfined()) {
            ObjectId id = TestStores.freshId();
            store.put(id, TestStores.bytes(arena, 200_000, 9));
            assertEquals(200_000, store.metrics().bytesFallback());
            assertEquals(0, store.metrics().bytesInMemory());
            try (PinnedObject pinned = store.get(id)) {
                assertEquals(-1, TestStores.firstMismatch(pinned.segment(), 9));
            }
            assertTrue(store.delete(id));
            assertEquals(0, store.metrics().bytesFallback());
        }
    }

    @Test
    void fullMemoryWithEverythingPinnedFallsBackInsteadOfFailing() throws Exception {
        try (ObjectStore store = store(64 << 10)) {
            ObjectId a = TestStores.freshId();
            ObjectId b = TestStores.freshId();
            try (WritableObject wa = store.create(a, 60 << 10); WritableObject wb = store.create(b, 60 << 10)) {
                TestStores.fill(wa.segment(), 1);
                TestStores.fill(wb.segment(), 2);
                wa.seal();
                wb.seal();
            }
            StoreMetrics m = store.metrics();
            assertTrue(m.bytesAllocated() <= m.capacityBytes());
            assertEquals(60 << 10, m.bytesFallback());
            try (PinnedObject pa = store.get(a); PinnedObject pb = store.get(b)) {
                assertEquals(-1, TestStores.firstMismatch(pa.segment(), 1));
                assertEquals(-1, TestStores.firstMismatch(pb.segment(), 2));
            }
        }
    }

    @Test
    void closeFreesMemoryAndLeavesNoFiles() throws Exception {
        ObjectStore store = store(1 << 20);
        MemorySegment view;
        try (Arena arena = Arena.ofConfined()) {
            ObjectId id = TestStores.freshId();
            store.put(id, TestStores.bytes(arena, 100, 1));
            store.put(TestStores.freshId(), TestStores.bytes(arena, 2 << 20, 2));
            view = store.get(id).segment();
        }
        store.close();
        store.close();
        assertEquals(0, TestStores.countFiles(dir));
        assertThrows(IllegalStateException.class, () -> view.get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(ObjectStoreException.class, () -> store.get(TestStores.freshId()));
    }

    @Test
    void aSecondLiveStoreWithTheSameNameIsRefused() {
        try (ObjectStore first = store(1 << 20)) {
            ObjectStoreException e = assertThrows(ObjectStoreException.class, () -> store(1 << 20));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
            assertTrue(first.metrics().capacityBytes() > 0);
        }
    }

    @Test
    void leftoversOfAnEarlierRunAreDeletedAtStart() throws Exception {
        Path own = dir.resolve("croupier-store-basics");
        java.nio.file.Files.createDirectories(own);
        java.nio.file.Files.writeString(own.resolve("spill-000001.dat"), "stale");
        try (ObjectStore store = store(1 << 20)) {
            assertFalse(java.nio.file.Files.exists(own.resolve("spill-000001.dat")));
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    @Test
    void objectIdPrintsAndParsesAs32HexDigits() {
        ObjectId id = ObjectId.of(0x0123456789abcdefL, -1L);
        assertEquals("0123456789abcdefffffffffffffffff", id.toString());
        assertEquals(id, ObjectId.parse(id.toString()));
        assertThrows(IllegalArgumentException.class, () -> ObjectId.parse("xyz"));
    }
}
