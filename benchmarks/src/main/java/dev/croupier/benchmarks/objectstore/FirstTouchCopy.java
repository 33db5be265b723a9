package dev.croupier.benchmarks.objectstore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Benchmark program behind a reverted object-store change: what the first touch of each page
 * costs when copying into a fresh mapping of a reserved tmpfs file (as a store's memory region
 * is), and whether faulting the whole mapping in first with {@code MemorySegment.load()} is
 * cheaper. Each round reserves a new file with {@code fallocate(1)} (as the store does with
 * {@code posix_fallocate}), maps it, and copies 64 MiB blocks over all of it; odd rounds call
 * {@code load()} first. A second copy over the same mapping gives the speed with every page
 * mapped.
 *
 * <p>Usage: {@code java <flags> -cp benchmarks/target/benchmarks.jar
 * dev.croupier.benchmarks.objectstore.FirstTouchCopy [GiB=1] [rounds=6] [dir=/dev/shm]}.
 */
public final class FirstTouchCopy {
    private FirstTouchCopy() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 1) << 30;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        Path dir = Path.of(args.length > 2 ? args[2] : "/dev/shm");
        try (Arena global = Arena.ofConfined()) {
            MemorySegment block = global.allocate(64L << 20, 4096);
            for (int r = 0; r < rounds; r++) {
                boolean load = r % 2 == 1;
                Path file = dir.resolve("croupier-first-touch-" + ProcessHandle.current().pid() + ".bin");
                try {
                    Process p = new ProcessBuilder("fallocate", "-l", Long.toString(bytes), file.toString())
                            .inheritIO().start();
                    if (p.waitFor() != 0) {
                        throw new IOException("fallocate failed for " + file);
                    }
                    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                         Arena arena = Arena.ofShared()) {
                        MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
                        long t0 = System.nanoTime();
                        if (load) {
                            mapped.load();
                        }
                        long t1 = System.nanoTime();
                        copyOver(block, mapped);
                        long t2 = System.nanoTime();
                        copyOver(block, mapped);
                        long t3 = System.nanoTime();
                        System.out.printf("load=%s: load %d ms + first copy %d ms = %d ms (%.1f GB/s);"
                                        + " second copy %.1f GB/s%n", load, (t1 - t0) / 1_000_000,
                                (t2 - t1) / 1_000_000, (t2 - t0) / 1_000_000, bytes / (double) (t2 - t1),
                                bytes / (double) (t3 - t2));
                    }
                } finally {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    private static void copyOver(MemorySegment block, MemorySegment target) {
        for (long at = 0; at < target.byteSize(); at += block.byteSize()) {
            MemorySegment.copy(block, 0, target, at, Math.min(block.byteSize(), target.byteSize() - at));
        }
    }
}
