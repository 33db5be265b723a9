package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's directory lists exactly its sealed objects in the memory region, where they lie,
 * and a reader that copies an object's bytes through it either gets them whole or learns that
 * they may have changed: never torn bytes it takes for the object's.
 */
@Timeout(120)
class ObjectDirectoryTest {

    @TempDir
    Path dir;

    /** A read-only mapping of a file, as a reader in another process makes one. */
    private static MemorySegment mapped(Path file, Arena arena) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        }
    }

    private ObjectStore store(String name, long capacity) {
        return ObjectStore.builder().name(name).capacityBytes(capacity)
                .memoryDirectory(dir).spillDirectory(dir).directory(true).build();
    }

    @Test
    void sealedObjectsAreListedWhereTheyLieAndUnlistedWhenDeleted() throws Exception {
        try (ObjectStore store = store("listed", 64L << 20); Arena arena = Arena.ofShared()) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                ObjectId id = ObjectId.of(3, i);
                store.put(id, TestStores.bytes(arena, 1000 + 7919L * i, i));
                ids.add(id);
            }
            MemorySegment directory = mapped(store.directoryFile(), arena);
            MemorySegment region = mapped(store.describe(ids.getFirst()).file(), arena);
            for (int i = 0; i < ids.size(); i++) {
                ObjectDirectory.Listing l = ObjectDirectory.find(directory, ids.get(i));
                assertNotNull(l, "object " + i + " is listed");
                ObjectLocation where = store.describe(ids.get(i));
                assertEquals(where.offset(), l.offset(), "offset of object " + i);
                assertEquals(where.length(), l.length(), "length of object " + i);
                assertEquals(-1, TestStores.firstMismatch(region.asSlice(l.offset(), l.length()), i),
                        "the listed bytes are object " + i + "'s");
                assertTrue(ObjectDirectory.unchanged(directory, l));
            }
            assertNull(ObjectDirectory.find(directory, ObjectId.of(3, 99)), "never stored");
            for (int i = 0; i < ids.size(); i += 2) {
                ObjectDirectory.Listing before = ObjectDirectory.find(directory, ids.get(i));
                store.delete(ids.get(i));
                assertNull(ObjectDirectory.find(directory, ids.get(i)), "object " + i + " deleted");
                assertTrue(!ObjectDirectory.unchanged(directory, before), "a copy made before the delete is refused");
            }
            for (int i = 1; i < ids.size(); i += 2) {
                assertNotNull(ObjectDirectory.find(directory, ids.get(i)), "object " + i + " kept");
            }
        }
    }

    @Test
    void anObjectSealedUnderAnotherNameIsListedByIt() throws Exception {
        try (ObjectStore store = store("renamed", 16L << 20); Arena arena = Arena.ofShared()) {
            ObjectId scratch = ObjectId.of(9, 1);
            ObjectId name = ObjectId.of(9, 2);
            WritableObject w = store.create(scratch, 5000);
            TestStores.fill(w.segment(), 42);
            w.sealListedAs(name);
            MemorySegment directory = mapped(store.directoryFile(), arena);
            assertNull(ObjectDirectory.find(directory, scratch));
            ObjectDirectory.Listing l = ObjectDirectory.find(directory, name);
            assertNotNull(l);
            assertEquals(store.describe(scratch).offset(), l.offset());
            store.delete(scratch);
            assertNull(ObjectDirectory.find(directory, name), "unlisted with the object it names");
        }
    }

    @Test
    void evictedObjectsAreUnlistedAndRestoredOnesListedAgain() throws Exception {
        try (ObjectStore store = store("evicting", 4L << 20); Arena arena = Arena.ofShared()) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                ObjectId id = ObjectId.of(5, i);
                store.put(id, TestStores.bytes(arena, 512 << 10, i)); // 12 MiB through a 4 MiB store
                ids.add(id);
            }
            MemorySegment directory = mapped(store.directoryFile(), arena);
            MemorySegment region = mapped(store.describe(ids.getLast()).file(), arena);
            int unlisted = 0;
            for (int i = 0; i < ids.size(); i++) {
                ObjectDirectory.Listing l = ObjectDirectory.find(directory, ids.get(i));
                if (l == null) {
                    unlisted++;
                    continue;
                }
                MemorySegment copy = arena.allocate(l.length());
                MemorySegment.copy(region, l.offset(), copy, 0, l.length());
                if (ObjectDirectory.unchanged(directory, l)) {
                    assertEquals(-1, TestStores.firstMismatch(copy, i), "listed object " + i + " is whole");
                }
            }
            assertTrue(unlisted >= 16, "most were evicted to make room: " + unlisted + " unlisted");
            try (PinnedObject pinned = store.get(ids.getFirst())) { // restores it, pinned so it stays
                ObjectDirectory.Listing l = ObjectDirectory.find(directory, ids.getFirst());
                assertNotNull(l, "listed again once restored");
                assertEquals(store.describe(ids.getFirst()).offset(), l.offset());
                assertEquals(-1, TestStores.firstMismatch(region.asSlice(l.offset(), l.length()), 0));
                assertEquals(pinned.size(), l.length());
            }
            ObjectId prefetched = ids.get(1);
            assertNull(ObjectDirectory.find(directory, prefetched), "evicted");
            for (ObjectId id : ids.subList(ids.size() - 8, ids.size())) {
                store.delete(id); // room to restore into
            }
            store.prefetch(List.of(prefetched)).join();
            ObjectDirectory.Listing l = ObjectDirectory.find(directory, prefetched);
            assertNotNull(l, "listed once prefetched");
            assertEquals(-1, TestStores.firstMismatch(region.asSlice(l.offset(), l.length()), 1));
        }
    }

    @Test
    void aStoreWithoutADirectoryHasNoFile() {
        try (ObjectStore store = ObjectStore.builder().name("unlisted").capacityBytes(1 << 20).memoryDirectory(dir)
                .spillDirectory(dir).build()) {
            assertNull(store.directoryFile());
        }
    }

    @Test
    void bytesThatAreNotADirectoryOfThisVersionListNothing() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            assertNull(ObjectDirectory.find(arena.allocate(4096), ObjectId.of(1, 1)));
            assertNull(ObjectDirectory.find(arena.allocate(8), ObjectId.of(1, 1)));
        }
        try (ObjectStore store = store("versioned", 16L << 20); Arena arena = Arena.ofShared()) {
            ObjectId id = ObjectId.of(4, 1);
            store.put(id, TestStores.bytes(arena, 5000, 1));
            MemorySegment copy = arena.allocate(Files.size(store.directoryFile()));
            MemorySegment.copy(mapped(store.directoryFile(), arena), 0, copy, 0, copy.byteSize());
            assertNotNull(ObjectDirectory.find(copy, id));
            copy.set(java.lang.foreign.ValueLayout.JAVA_INT, 8, ObjectDirectory.VERSION + 1);
            assertNull(ObjectDirectory.find(copy, id), "a later layout is not read as this one");
        }
    }

    /**
     * A writer keeps replacing objects in a store too small to keep them, so their memory is
     * reused at once, while a reader copies whatever it finds listed: every copy the directory
     * says is unchanged must be the object's own bytes.
     */
    @Test
    void aCopyThatRacesAReuseIsNeverTakenForTheObject() throws Exception {
        int objects = 4000;
        long size = 64 << 10;
        try (ObjectStore store = store("racing", 1L << 20); Arena arena = Arena.ofShared()) {
            MemorySegment directory = mapped(store.directoryFile(), arena);
            AtomicLong written = new AtomicLong(-1);
            AtomicBoolean done = new AtomicBoolean();
            Thread writer = Thread.ofPlatform().start(() -> {
                try (Arena values = Arena.ofConfined()) {
                    MemorySegment value = values.allocate(size);
                    for (int i = 0; i < objects; i++) {
                        TestStores.fill(value, i);
                        store.put(ObjectId.of(11, i), value);
                        written.set(i);
                        if (i >= 4) {
                            store.delete(ObjectId.of(11, i - 4)); // its memory goes to a later object
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.set(true);
                }
            });
            MemorySegment region = null;
            MemorySegment copy = arena.allocate(size);
            long whole = 0;
            long refused = 0;
            while (!done.get()) {
                long newest = written.get();
                if (newest < 0) {
                    Thread.onSpinWait();
                    continue;
                }
                long i = Math.max(0, newest - ThreadLocalRandom.current().nextLong(6));
                ObjectDirectory.Listing l = ObjectDirectory.find(directory, ObjectId.of(11, i));
                if (l == null) {
                    continue;
                }
                if (region == null) {
                    try {
                        region = mapped(store.describe(ObjectId.of(11, newest)).file(), arena);
                    } catch (ObjectNotFoundException deleted) {
                        continue; // the writer deleted it meanwhile (this thread was descheduled): a newer one
                    }
                }
                MemorySegment.copy(region, l.offset(), copy, 0, l.length());
                if (ObjectDirectory.unchanged(directory, l)) {
                    assertEquals(-1, TestStores.firstMismatch(copy, i), "object " + i + " copied whole");
                    whole++;
                } else {
                    refused++;
                }
            }
            writer.join();
            assertTrue(whole > 0, "some copies were whole (" + whole + " whole, " + refused + " refused)");
        }
    }
}
