package dev.croupier.benchmarks.objectstore;

import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;

/**
 * What the first touch of each page costs when copying into fresh store memory. Rounds take
 * four modes in turn, each over {@code GiB}: {@code fault}, a plain copy into a new reserved
 * tmpfs file's mapping (as a shared store's region is), one page fault per page written;
 * {@code load}, {@code MemorySegment.load()} over the mapping first (a change that was tried and
 * reverted); {@code store}, 64 MiB puts into a new {@link ObjectStore} of that capacity, whose
 * region maps each block it reserves in one call ({@code madvise(MADV_POPULATE_WRITE)});
 * {@code private}, the same puts into a store built with {@code sharedMemory(false)}, whose
 * region is the process's own anonymous memory (an embedded node's). A second copy over the
 * same memory (in the stores: the same puts after deleting the first ones, into the blocks they
 * freed) gives the speed with every page mapped. Every mode's first copy is timed with its
 * reservation, which zeroes the pages (in the stores it is part of the puts), so the modes
 * compare like for like. In the stores the close, which frees every page populated, is timed
 * too.
 *
 * <p>Usage: {@code java <flags> -cp benchmarks/target/benchmarks.jar
 * dev.croupier.benchmarks.objectstore.FirstTouchCopy [GiB=1] [rounds=8] [dir=/dev/shm]}.
 */
public final class FirstTouchCopy {
    private FirstTouchCopy() {
    }

    private static final long BLOCK = 64L << 20;

    public static void main(String[] args) throws IOException, InterruptedException {
        long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 1) << 30;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        Path dir = Path.of(args.length > 2 ? args[2] : "/dev/shm");
        try (Arena global = Arena.ofConfined()) {
            MemorySegment block = global.allocate(BLOCK, 4096);
            block.fill((byte) 1);
            for (int r = 0; r < rounds; r++) {
                String mode = switch (r % 4) {
                    case 0 -> "fault";
                    case 1 -> "load";
                    case 2 -> "store";
                    default -> "private";
                };
                long[] t = switch (mode) {
                    case "store" -> intoStore(block, bytes, dir, true);
                    case "private" -> intoStore(block, bytes, dir, false);
                    default -> intoMapping(block, bytes, dir, mode);
                };
                System.out.printf("%-7s: reserve %d ms + load %d ms + first copy %d ms = %d ms (%.2f GB/s); second copy"
                                + " %.1f GB/s%s%n", mode, (t[1] - t[0]) / 1_000_000, (t[2] - t[1]) / 1_000_000,
                        (t[3] - t[2]) / 1_000_000, (t[3] - t[0]) / 1_000_000, bytes / (double) (t[3] - t[0]),
                        bytes / (double) (t[4] - t[3]), t.length > 5 ? "; close " + t[5] / 1_000_000 + " ms" : "");
            }
        }
    }

    /**
     * Times (start, after reserving, after load, after the first copy, after the second) of
     * copying into a fresh mapping. The reservation ({@code fallocate(1)}, which zeroes the
     * file's pages) is timed because a store reserves too.
     */
    private static long[] intoMapping(MemorySegment block, long bytes, Path dir, String mode)
            throws IOException, InterruptedException {
        Path file = dir.resolve("croupier-first-touch-" + ProcessHandle.current().pid() + ".bin");
        try {
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder("fallocate", "-l", Long.toString(bytes), file.toString())
                    .inheritIO().start();
            if (p.waitFor() != 0) {
                throw new IOException("fallocate failed for " + file);
            }
            long t1 = System.nanoTime();
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                 Arena arena = Arena.ofShared()) {
                MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
                if (mode.equals("load")) {
                    mapped.load();
                }
                long t2 = System.nanoTime();
                copyOver(block, mapped);
                long t3 = System.nanoTime();
                copyOver(block, mapped);
                return new long[] {t0, t1, t2, t3, System.nanoTime()};
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * The same times for puts into a new store of {@code bytes} (its reservation is in the puts),
     * then again, and how long its close took; its memory shared (a tmpfs file) or private.
     */
    private static long[] intoStore(MemorySegment block, long bytes, Path dir, boolean shared)
            throws IOException, InterruptedException {
        Path spill = Files.createTempDirectory("croupier-first-touch-spill-");
        int blocks = (int) (bytes / BLOCK);
        try (ObjectStore store = ObjectStore.builder().name("first-touch-" + ProcessHandle.current().pid())
                .capacityBytes(bytes + (64L << 20)).memoryDirectory(dir).spillDirectory(spill).sharedMemory(shared)
                .build()) {
            long t0 = System.nanoTime();
            for (int i = 0; i < blocks; i++) {
                store.put(ObjectId.of(1, i), block);
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < blocks; i++) {
                store.delete(ObjectId.of(1, i));
            }
            long t3 = System.nanoTime();
            for (int i = 0; i < blocks; i++) {
                store.put(ObjectId.of(2, i), block);
            }
            long t4 = System.nanoTime();
            store.close(); // frees every page the store populated
            return new long[] {t0, t0, t0, t2, t2 + (t4 - t3), System.nanoTime() - t4};
        } finally {
            try (var files = Files.walk(spill)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private static void copyOver(MemorySegment block, MemorySegment target) {
        for (long at = 0; at < target.byteSize(); at += block.byteSize()) {
            MemorySegment.copy(block, 0, target, at, Math.min(block.byteSize(), target.byteSize() - at));
        }
    }
}
