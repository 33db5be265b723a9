package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spilling into a full file system: the writer must get a {@link SpillFailedException} naming
 * the directory and the bytes wanted, and every object written before must still read back.
 * Needs an 8 MiB tmpfs (mounted here, which needs root); without one the test is skipped with
 * the reason printed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DiskFullTest {

    private static final int OBJECT = 256 << 10;

    @TempDir
    Path memory;
    @TempDir
    Path base;
    private Path small;
    private boolean mounted;

    @BeforeEach
    void mountSmallTmpfs() throws Exception {
        small = base.resolve("small");
        Files.createDirectories(small);
        String reason;
        try {
            Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", small.toString())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            boolean done = p.waitFor(20, TimeUnit.SECONDS);
            mounted = done && p.exitValue() == 0;
            reason = "mount -t tmpfs -o size=8m failed: " + out.strip();
        } catch (IOException e) {
            reason = "cannot run mount: " + e.getMessage();
        }
        if (!mounted) {
            System.out.println("DiskFullTest skipped: " + reason);
        }
        Assumptions.assumeTrue(mounted, reason);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            Process p = new ProcessBuilder("umount", small.toString()).inheritIO().start();
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
                // never leave a mount behind, even if something still maps a file there
                new ProcessBuilder("umount", "-l", small.toString()).inheritIO().start().waitFor(20, TimeUnit.SECONDS);
                throw new AssertionError("the store left " + small + " busy after close");
            }
        }
    }

    @Test
    void fullSpillDiskGivesSpillFailedAndLosesNothing() throws Exception {
        List<ObjectId> ids = new ArrayList<>();
        SpillFailedException failure = null;
        try (ObjectStore store = ObjectStore.builder().name("disk-full").capacityBytes(4 << 20)
                .memoryDirectory(memory).spillDirectory(small).spillFileBytes(1 << 20).build()) {
            for (int i = 0; i < 200 && failure == null; i++) {
                ObjectId id = TestStores.freshId();
                try (WritableObject w = store.create(id, OBJECT)) {
                    TestStores.fill(w.segment(), i);
                    w.seal();
                    ids.add(id);
                } catch (SpillFailedException e) {
                    failure = e;
                }
            }
            assertNotNull(failure, "8 MiB of disk plus 4 MiB of memory cannot hold 50 MiB");
            assertTrue(failure.getMessage().contains(small.toString()), failure.getMessage());
            assertTrue(failure.directory().startsWith(small), failure.directory().toString());
            assertTrue(failure.bytesWanted() > 0, failure.getMessage());
            assertTrue(store.metrics().spillFailures() > 0, store.metrics().toString());
            assertTrue(store.metrics().bytesAllocated() <= store.metrics().capacityBytes());
            assertTrue(ids.size() > 16, "memory and disk held " + ids.size() + " objects before failing");

            // freeing objects makes room again: the store recovers without a restart and every
            // object that was not deleted reads back intact, from memory or from disk
            for (int i = 0; i < ids.size(); i += 2) {
                assertTrue(store.delete(ids.get(i)));
            }
            ObjectId again = TestStores.freshId();
            try (WritableObject w = store.create(again, OBJECT)) {
                TestStores.fill(w.segment(), 12345);
                w.seal();
            }
            for (int i = 1; i < ids.size(); i += 2) {
                try (PinnedObject pinned = store.get(ids.get(i))) {
                    assertEquals(-1, TestStores.firstMismatch(pinned.segment(), i), "object " + i + " damaged");
                }
            }
            try (PinnedObject pinned = store.get(again)) {
                assertEquals(-1, TestStores.firstMismatch(pinned.segment(), 12345));
            }
        }
        assertEquals(0, TestStores.countFiles(small));
        assertEquals(0, TestStores.countFiles(memory));
    }
}
