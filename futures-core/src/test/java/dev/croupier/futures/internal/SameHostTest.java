package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A copy through a holder's directory is kept only when the object stayed where it was listed
 * for the whole copy; otherwise the puller asks the holder, and a holder whose files are gone
 * is asked again.
 */
@Timeout(60)
class SameHostTest {

    @TempDir
    Path dir;

    private ObjectStore holderStore() {
        return ObjectStore.builder().name("same-host-holder").capacityBytes(16L << 20).memoryDirectory(dir)
                .spillDirectory(dir).directory(true).build();
    }

    private static MemorySegment pattern(Arena arena, long size, int seed) {
        MemorySegment s = arena.allocate(size);
        for (long i = 0; i < size; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return s;
    }

    @Test
    void aListedObjectIsCopiedWhole() throws Exception {
        try (ObjectStore store = holderStore(); Arena arena = Arena.ofShared()) {
            ObjectId id = ObjectId.of(1, 1);
            MemorySegment bytes = pattern(arena, 200_000, 5);
            store.put(id, bytes);
            SameHost.Holder holder = new SameHost.Holder(store.describe(id).file(), store.directoryFile());
            SameHost sameHost = new SameHost();
            try {
                MemorySegment target = arena.allocate(200_000);
                assertEquals(200_000, sameHost.copyListed("holder", holder, id, size -> target));
                assertEquals(-1, bytes.mismatch(target));
                assertEquals(-1, sameHost.copyListed("holder", holder, ObjectId.of(1, 2), size -> target),
                        "an object the holder does not list is asked for");
            } finally {
                sameHost.close();
            }
        }
    }

    @Test
    void aCopyDuringWhichTheHolderFreedTheObjectIsDropped() throws Exception {
        try (ObjectStore store = holderStore(); Arena arena = Arena.ofShared()) {
            ObjectId id = ObjectId.of(2, 1);
            store.put(id, pattern(arena, 100_000, 7));
            SameHost.Holder holder = new SameHost.Holder(store.describe(id).file(), store.directoryFile());
            SameHost sameHost = new SameHost();
            try {
                MemorySegment target = arena.allocate(100_000);
                // the holder frees the object after the puller found it, before it copies
                assertEquals(-1, sameHost.copyListed("holder", holder, id, size -> {
                    store.delete(id);
                    store.put(ObjectId.of(2, 2), pattern(arena, 100_000, 9)); // its memory reused
                    return target;
                }));
            } finally {
                sameHost.close();
            }
        }
    }

    @Test
    void aHolderWhoseFilesAreGoneIsAskedInstead() throws Exception {
        Path region;
        Path directory;
        ObjectId id = ObjectId.of(3, 1);
        try (ObjectStore store = holderStore(); Arena arena = Arena.ofShared()) {
            store.put(id, pattern(arena, 100_000, 3));
            region = store.describe(id).file();
            directory = store.directoryFile();
        } // closed: its files are deleted
        SameHost sameHost = new SameHost();
        try {
            assertEquals(-1, sameHost.copyListed("holder", new SameHost.Holder(region, directory), id,
                    size -> MemorySegment.ofArray(new byte[(int) size])));
        } finally {
            sameHost.close();
        }
    }
}
