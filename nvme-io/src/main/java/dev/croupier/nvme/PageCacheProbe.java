package dev.croupier.nvme;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Measures and drops one file's pages in the Linux page cache.
 *
 * <p>{@link #residentBytes} maps the file (mapping alone faults nothing in) and asks
 * {@code mincore(2)} which pages are cached. That is per file and exact, where the system-wide
 * {@code Cached:} line of {@code /proc/meminfo} also moves with every other process on the
 * machine (builds, other jobs), which on a shared host swamps the few pages a sampler might
 * add. The file is scanned in windows of {@value #WINDOW_BYTES} bytes, so the residency vector
 * stays small (one byte per page: 256 KiB per GiB). Stateless and thread-safe.
 */
public final class PageCacheProbe {

    /** Bytes of the file mapped at a time. */
    static final long WINDOW_BYTES = 1L << 30;

    private PageCacheProbe() {}

    /** True where the probe works (Linux). */
    public static boolean available() {
        return Libc.AVAILABLE;
    }

    /** Bytes of {@code file} now in the page cache, counted in whole pages. */
    public static long residentBytes(Path file) throws IOException {
        requireAvailable();
        long pageSize = Libc.pageSize();
        long resident = 0;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            for (long offset = 0; offset < size; offset += WINDOW_BYTES) {
                long length = Math.min(WINDOW_BYTES, size - offset);
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment mapped = channel.map(FileChannel.MapMode.READ_ONLY, offset, length, arena);
                    long pages = (length + pageSize - 1) / pageSize;
                    MemorySegment vector = arena.allocate(pages);
                    Libc.mincore(mapped, vector);
                    for (long p = 0; p < pages; p++) {
                        if ((vector.get(ValueLayout.JAVA_BYTE, p) & 1) != 0) {
                            resident++;
                        }
                    }
                }
            }
        }
        return resident * pageSize;
    }

    /**
     * Writes {@code file}'s dirty pages back ({@code fsync}) and asks the kernel to drop all
     * its pages from the page cache ({@code posix_fadvise(POSIX_FADV_DONTNEED)}, which skips
     * dirty pages); used to start measurements cold without dropping the whole machine's cache.
     */
    public static void evict(Path file) throws IOException {
        requireAvailable();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            channel.force(false);
        }
        int fd = Libc.openReadOnly(file);
        try {
            int rc = Libc.dropFromPageCache(fd, 0, 0);
            if (rc != 0) {
                throw new IOException(file + ": posix_fadvise(DONTNEED) failed with error " + rc);
            }
        } finally {
            Libc.close(fd);
        }
    }

    private static void requireAvailable() {
        if (!Libc.AVAILABLE) {
            throw new UnsupportedOperationException("page-cache probing needs Linux; os.name = "
                    + System.getProperty("os.name"));
        }
    }
}
