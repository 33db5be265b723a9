package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store costs memory only as it is used: its region starts without blocks and grows ahead of
 * the highest byte handed out. On a memory folder too small for its capacity it keeps what the
 * folder gives, spills the rest, and loses no byte; never a SIGBUS.
 */
@Timeout(120)
class LazyReservationTest {

    @TempDir
    Path dir;

    /** Bytes of real blocks the file holds (st_blocks x 512). */
    private static long allocatedBytes(Path file) throws Exception {
        Process p = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] out = new String(p.getInputStream().readAllBytes()).trim().split(" ");
        assertEquals(0, p.waitFor());
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    private static Path region(Path memory) throws Exception {
        try (var files = Files.walk(memory)) {
            return files.filter(f -> f.getFileName().toString().equals(MemoryRegion.FILE_NAME)).findFirst().orElseThrow();
        }
    }

    @Test
    void aLargeStoreCostsOnlyWhatItHolds() throws Exception {
        Path memory = Files.createDirectories(dir.resolve("memory"));
        try (ObjectStore store = ObjectStore.builder().name("lazy").capacityBytes(4L << 30).memoryDirectory(memory)
                .spillDirectory(dir).build()) {
            Path file = region(memory);
            assertEquals(4L << 30, Files.size(file), "mapped whole");
            assertTrue(allocatedBytes(file) < 1 << 20, "but holding no memory yet: " + allocatedBytes(file));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment value = arena.allocate(1 << 20);
                for (int i = 0; i < 10; i++) {
                    TestStores.fill(value, i);
                    store.put(ObjectId.of(7, i), value);
                }
            }
            long held = allocatedBytes(file);
            assertTrue(held >= 10L << 20 && held <= (10L << 20) + MemoryRegion.GROWTH_BYTES + (1 << 20),
                    "what it holds, and at most one step ahead: " + held);
            for (int i = 0; i < 10; i++) {
                try (PinnedObject o = store.get(ObjectId.of(7, i))) {
                    assertEquals(-1, TestStores.firstMismatch(o.segment(), i));
                }
            }
        }
    }

    /**
     * A store only its own process reads keeps its region in private memory: no file in the
     * memory folder (whose own folder still holds the lock and the spill pointer that reclaim
     * the spill folder after a crash), memory only as it is used, every byte spilled and read
     * back, and {@link ObjectStore#describe} refusing, by name, what no other process can map.
     */
    @Test
    void aPrivateStoreHasNoFileCostsOnlyWhatItHoldsAndSpills() throws Exception {
        Path memory = Files.createDirectories(dir.resolve("private"));
        int objects = 40;
        try (ObjectStore store = ObjectStore.builder().name("private").capacityBytes(16L << 20).memoryDirectory(memory)
                .spillDirectory(dir).sharedMemory(false).build();
             Arena arena = Arena.ofConfined()) {
            try (var files = Files.walk(memory)) {
                List<String> names = files.map(f -> f.getFileName().toString()).toList();
                assertTrue(!names.contains(MemoryRegion.FILE_NAME) && names.contains("spill.dir"), names.toString());
            }
            putAndReadBack(store, arena, 11, objects);
            assertTrue(store.metrics().bytesSpilled() > 0, "40 MiB through 16 MiB: " + store.metrics());
            ObjectStoreException refused = null;
            for (int i = 0; i < objects && refused == null; i++) {
                try {
                    store.describe(ObjectId.of(11, i));
                } catch (ObjectStoreException e) {
                    refused = e;
                }
            }
            assertTrue(refused != null && refused.getMessage().contains("private memory")
                    && refused.getMessage().contains("'private'"), "an object in memory is refused by name: " + refused);
        }
        try (MemoryRegion region = new MemoryRegion(Files.createDirectories(dir.resolve("large")), 4L << 30, false,
                false)) {
            Assumptions.assumeTrue(region.file() == null, "no private memory here (not Linux?)");
            assertTrue(region.reserveTo(10L << 20));
            long rss = residentKib(region.slice(0, 1).address()) << 10;
            assertTrue(rss >= 10L << 20 && rss <= (10L << 20) + MemoryRegion.GROWTH_BYTES + (1 << 20),
                    "a 4 GiB region holds what was reserved, and at most one step ahead: " + rss);
        }
    }

    /** Rss, in KiB, of the mapping of this process that starts at {@code address} (/proc/self/smaps). */
    private static long residentKib(long address) throws Exception {
        List<String> smaps = Files.readAllLines(Path.of("/proc/self/smaps"));
        String start = Long.toHexString(address) + "-";
        for (int i = 0; i < smaps.size(); i++) {
            if (smaps.get(i).startsWith(start)) {
                for (String line : smaps.subList(i + 1, smaps.size())) {
                    if (line.startsWith("Rss:")) {
                        return Long.parseLong(line.replaceAll("[^0-9]", ""));
                    }
                }
            }
        }
        throw new AssertionError("no mapping at " + start + " in /proc/self/smaps");
    }

    /** Minor faults of the calling thread (not the process: collector and compiler threads fault too). */
    private static long minorFaults() throws Exception {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]);
    }

    @Test
    void reservedMemoryIsPopulatedSoWritersTakeNoFaultPerPage() throws Exception {
        boolean populates;
        try (MemoryRegion region = new MemoryRegion(Files.createDirectories(dir.resolve("probe")), 1 << 20, false, true)) {
            populates = NativeFiles.populate(region.slice(0, 1 << 20));
        }
        if (!populates) {
            System.out.println("LazyReservationTest.reservedMemoryIsPopulatedSoWritersTakeNoFaultPerPage skipped:"
                    + " madvise(MADV_POPULATE_WRITE) is refused here (Linux before 5.14?)");
        }
        Assumptions.assumeTrue(populates, "madvise(MADV_POPULATE_WRITE) refused");
        for (boolean shared : new boolean[] {true, false}) {
            writersTakeNoFaultPerPage(shared);
        }
    }

    private void writersTakeNoFaultPerPage(boolean shared) throws Exception {
        Path memory = Files.createDirectories(dir.resolve("memory-" + shared));
        // within the first reservation step, so that no populate (whose own faults the thread
        // counts, a page each in private memory) falls among the writes counted
        int objects = (int) (MemoryRegion.GROWTH_BYTES >> 20) - 8;
        long pages = objects * (1L << 20) / 4096;
        try (ObjectStore store = ObjectStore.builder().name("populated-" + shared).capacityBytes(1L << 30)
                .memoryDirectory(memory).spillDirectory(dir).sharedMemory(shared).build();
             Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(1 << 20);
            TestStores.fill(value, 1); // the source's own first-touch faults happen here, before counting
            store.put(ObjectId.of(8, 0), value);
            long before = minorFaults();
            for (int i = 1; i <= objects; i++) {
                store.put(ObjectId.of(8, i), value);
            }
            long faults = minorFaults() - before;
            // without population the writes fault about once per 4 pages written (2,480 for 8,192
            // pages on Linux 6.18, which maps a few pages per fault); with it, the writing thread
            // takes next to none
            assertTrue(faults < pages / 32, faults + " minor faults for " + pages + " pages written, shared " + shared);
            for (int i = 0; i <= objects; i++) {
                try (PinnedObject o = store.get(ObjectId.of(8, i))) {
                    assertEquals(-1, TestStores.firstMismatch(o.segment(), 1), "object " + i);
                }
            }
        }
    }

    /**
     * The region is mapped advised random ({@code rr} among its flags in /proc/self/smaps), so
     * that tearing it down skips marking each page accessed first.
     */
    @Test
    void theRegionIsMappedAdvisedRandom() throws Exception {
        Path memory = Files.createDirectories(dir.resolve("advised"));
        try (ObjectStore store = ObjectStore.builder().name("advised").capacityBytes(64L << 20).memoryDirectory(memory)
                .spillDirectory(dir).build()) {
            String file = region(memory).toString();
            List<String> smaps = Files.readAllLines(Path.of("/proc/self/smaps"));
            int mapping = -1;
            for (int i = 0; i < smaps.size() && mapping < 0; i++) {
                if (smaps.get(i).endsWith(" " + file)) {
                    mapping = i;
                }
            }
            assertTrue(mapping >= 0, "the region " + file + " is mapped");
            String flags = smaps.subList(mapping + 1, smaps.size()).stream().filter(l -> l.startsWith("VmFlags:"))
                    .findFirst().orElseThrow();
            assertTrue((flags + " ").contains(" rr "), flags);
        }
    }

    @Test
    void aFullMemoryFolderSpillsInsteadOfFaulting() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small-tmpfs"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", small.toString())
                .redirectErrorStream(true).start();
        String why = new String(mount.getInputStream().readAllBytes()).trim();
        boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
        if (!mounted) {
            System.out.println("LazyReservationTest.aFullMemoryFolderSpillsInsteadOfFaulting skipped: cannot mount"
                    + " a small tmpfs (needs root): " + why);
        }
        Assumptions.assumeTrue(mounted, "cannot mount a small tmpfs: " + why);
        try {
            Path spill = Files.createDirectories(dir.resolve("spill"));
            // with a directory, whose slots are written as objects come and go, as well: its
            // pages are reserved up front, so the full folder cannot fault them either
            for (boolean listed : new boolean[] {false, true}) {
                fillAndReadBack(small, spill, listed);
            }
            // a folder with room for the store's lock file but not for the directory (128 KiB
            // for 64 MiB of capacity): the store keeps none, and works
            Path filler = small.resolve("filler");
            Files.write(filler, new byte[(8 << 20) - (64 << 10)]);
            try (ObjectStore store = ObjectStore.builder().name("no-room").capacityBytes(64L << 20)
                    .memoryDirectory(small).spillDirectory(spill).directory(true).build();
                 Arena arena = Arena.ofConfined()) {
                assertEquals(null, store.directoryFile(), "no directory on a full folder");
                store.put(ObjectId.of(10, 1), TestStores.bytes(arena, 1 << 20, 7));
                try (PinnedObject o = store.get(ObjectId.of(10, 1))) {
                    assertEquals(-1, TestStores.firstMismatch(o.segment(), 7));
                }
            }
            Files.delete(filler);
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** 40 MiB into a store of 64 MiB on an 8 MiB folder; every byte read back. */
    private void fillAndReadBack(Path small, Path spill, boolean listed) throws Exception {
        int objects = 40;
        try (ObjectStore store = ObjectStore.builder().name("full-" + listed).capacityBytes(64L << 20)
                .memoryDirectory(small).spillDirectory(spill).directory(listed).build();
             Arena arena = Arena.ofConfined()) {
            putAndReadBack(store, arena, 9, objects);
            StoreMetrics m = store.metrics();
            assertTrue(m.bytesSpilled() > 0, "the rest went to the spill folder: " + m);
            assertTrue(allocatedBytes(region(small)) <= 8L << 20, "within the folder");
            assertEquals(listed, store.directoryFile() != null, "a directory when asked for");
        }
    }

    /** Puts {@code objects} objects of 1 MiB under tag {@code tag}, each of its own bytes, and reads every byte back. */
    private static void putAndReadBack(ObjectStore store, Arena arena, long tag, int objects) throws Exception {
        MemorySegment value = arena.allocate(1 << 20);
        for (int i = 0; i < objects; i++) {
            TestStores.fill(value, 100 + i);
            store.put(ObjectId.of(tag, i), value);
        }
        for (int i = 0; i < objects; i++) {
            try (PinnedObject o = store.get(ObjectId.of(tag, i))) {
                assertEquals(-1, TestStores.firstMismatch(o.segment(), 100 + i), "object " + i);
            }
        }
    }
}
