package dev.croupier.examples.sort;

import com.sun.nio.file.ExtendedOpenOption;
import dev.croupier.nvme.PageCacheProbe;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The disk's sequential bandwidth, measured on the spot in the folder a job uses, each way
 * through the page cache and with {@code O_DIRECT}, keeping the faster: write a file in 8 MiB
 * chunks and fdatasync it, drop it from the page cache, read it back. The sort benchmark reports
 * its time against this bound, as the Exoshuffle paper does, with its input read at the rate
 * the whole input did read ({@link #sortSeconds(long, long, double)}). Both ways are measured
 * because the sort uses both (direct for its data, the page cache where a file system refuses
 * direct I/O) and which is faster depends on the machine: on the virtual machine of
 * docs/benchmarks.md a cold buffered read gets more readahead in flight than one direct stream,
 * and a direct write skips the copy into the page cache.
 *
 * @param writeBytesPerSecond sequential write, including the final fdatasync
 * @param readBytesPerSecond sequential read of data not in the page cache (when it could be
 *     evicted; on tmpfs this is a memory read)
 */
public record DiskBound(double writeBytesPerSecond, double readBytesPerSecond) {

    private static final int CHUNK = 8 << 20;

    /** Measures with files of {@code bytes} (rounded up to 8 MiB) in {@code dir}, deleted afterwards. */
    public static DiskBound measure(Path dir, long bytes) throws IOException {
        Files.createDirectories(dir);
        long chunks = Math.max(1, (bytes + CHUNK - 1) / CHUNK);
        ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK + PAGE).alignedSlice(PAGE).slice(0, CHUNK);
        for (int i = 0; i < CHUNK; i += 8) {
            chunk.putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        DiskBound buffered = measure(dir, chunks, chunk, false);
        DiskBound direct = measure(dir, chunks, chunk, true);
        if (direct == null) {
            return buffered;
        }
        return new DiskBound(Math.max(buffered.writeBytesPerSecond, direct.writeBytesPerSecond),
                Math.max(buffered.readBytesPerSecond, direct.readBytesPerSecond));
    }

    private static final int PAGE = 4096;

    /** One way of measuring; null if {@code direct} and the file system refuses {@code O_DIRECT}. */
    private static DiskBound measure(Path dir, long chunks, ByteBuffer chunk, boolean direct) throws IOException {
        Path file = Files.createTempFile(dir, "croupier-disk-bound-", ".tmp");
        try {
            long t0 = System.nanoTime();
            try (FileChannel out = open(file, StandardOpenOption.WRITE, direct)) {
                if (out == null) {
                    return null;
                }
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
            try (FileChannel in = open(file, StandardOpenOption.READ, direct)) {
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

    private static FileChannel open(Path file, StandardOpenOption mode, boolean direct) throws IOException {
        if (!direct) {
            return FileChannel.open(file, mode);
        }
        try {
            return FileChannel.open(file, mode, ExtendedOpenOption.DIRECT);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /**
     * Seconds a sort of {@code bytes} needs at least: read the input and write the output, and
     * write and read back {@code spillBytes}, what its stores cannot hold (every byte must be
     * held somewhere once the last input byte is read, before the first output byte is final).
     * The Exoshuffle paper writes and reads back every byte out of core; a sort whose stores
     * hold part of its data need not.
     */
    public double sortSeconds(long bytes, long spillBytes) {
        return sortSeconds(bytes, spillBytes, readBytesPerSecond);
    }

    /**
     * Like {@link #sortSeconds(long, long)}, with the input read at {@code inputReadBytesPerSecond},
     * a rate at which the whole input did read, instead of the probe's. The probe reads a file
     * it has just written, which a virtual machine's host may still hold in its cache, while the
     * input, written earlier and larger than the probe's file, may come from the disk
     * (docs/benchmarks.md, "A bound the host's cache does not set"); a rate at which it did read
     * is one the disk, or a cache the sort had too, gave it. The spill is read back just after it
     * is written, as the probe's file was, so it stays at the probe's rate.
     */
    public double sortSeconds(long bytes, long spillBytes, double inputReadBytesPerSecond) {
        return (bytes + spillBytes) / writeBytesPerSecond + bytes / inputReadBytesPerSecond
                + spillBytes / readBytesPerSecond;
    }
}
