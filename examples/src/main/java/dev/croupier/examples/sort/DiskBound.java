package dev.croupier.examples.sort;

import dev.croupier.nvme.PageCacheProbe;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The disk's sequential bandwidth, measured on the spot in the folder a job uses: write a file
 * in 8 MiB chunks and fdatasync it, drop it from the page cache, read it back. The sort
 * benchmark reports its time against this bound, as the Exoshuffle paper does.
 *
 * @param writeBytesPerSecond sequential write, including the final fdatasync
 * @param readBytesPerSecond sequential read of data not in the page cache (when it could be
 *     evicted; on tmpfs this is a memory read)
 */
public record DiskBound(double writeBytesPerSecond, double readBytesPerSecond) {

    private static final int CHUNK = 8 << 20;

    /** Measures with a file of {@code bytes} (rounded up to 8 MiB) in {@code dir}, deleted afterwards. */
    public static DiskBound measure(Path dir, long bytes) throws IOException {
        Files.createDirectories(dir);
        Path file = Files.createTempFile(dir, "croupier-disk-bound-", ".tmp");
        try {
            ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK);
            for (int i = 0; i < CHUNK; i += 8) {
                chunk.putLong(i, i * 0x9E3779B97F4A7C15L);
            }
            long chunks = Math.max(1, (bytes + CHUNK - 1) / CHUNK);
            long t0 = System.nanoTime();
            try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
                for (long c = 0; c < chunks; c++) {
                    chunk.clear();
                    while (chunk.hasRemaining()) {
                        out.write(chunk);
                    }
                }
                out.force(false);
            }
            double write = chunks * (double) CHUNK / ((System.nanoTime() - t0) / 1e9);
            if (PageCacheProbe.available()) {
                PageCacheProbe.evict(file);
            }
            long t1 = System.nanoTime();
            try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
                chunk.clear();
                while (in.read(chunk) > 0) {
                    chunk.clear();
                }
            }
            double read = chunks * (double) CHUNK / ((System.nanoTime() - t1) / 1e9);
            return new DiskBound(write, read);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Seconds a sort of {@code bytes} needs at least for the I/O it did: read the input and write
     * the output once, write what it spilled and read what it restored. For a fully out-of-core
     * sort (everything spilled and restored once) that is the paper's bound: read twice and
     * write twice.
     */
    public double sortSeconds(long bytes, long spilledBytes, long restoredBytes) {
        return (bytes + spilledBytes) / writeBytesPerSecond + (bytes + restoredBytes) / readBytesPerSecond;
    }
}
