package dev.croupier.shuffle.records;

import com.sun.nio.file.ExtendedOpenOption;
import dev.croupier.futures.TaskOutput;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Reads and writes ranges of record files with {@code O_DIRECT}, bypassing the page cache.
 *
 * <p>Design note: on the virtual machines this project is measured on, page-cache I/O costs the
 * CPU a copy into or out of freshly faulted pages (plus writeback for writes), about one
 * core-second per 0.5 GB (docs/benchmarks.md), and a mapped cold file costs the same in page
 * faults; a direct read or write is a DMA to or from the caller's memory. A read takes the
 * range's whole pages into task memory and returns the range as a slice of them. A write takes
 * its bytes chunk by chunk from a {@link RangeSource} into one reused chunk buffer of task
 * memory (so a 64 MiB sorted range needs 4 MiB, not 64 MiB, of store memory). A direct write
 * needs a page-aligned file offset, length and memory address, and a range rarely starts on a
 * page (a sorted range starts after all lower ranges' bytes). So every chunk but the first
 * starts at a file offset that is a multiple of both the page and the record size, and each
 * chunk is placed in the buffer at its offset within a page; then every whole page goes direct,
 * and only the partial first and last pages of the range (which neighbouring ranges share) go
 * through the page cache. On file systems without {@code O_DIRECT} all of it goes through the
 * page cache, and a read returns null so that the caller maps the file.
 *
 * <pre>
 *  file:  ... | head (buffered) | page | page | ... | page | tail (buffered) | ...
 *             ^ position        ^ chunks, each at a multiple of lcm(page, record size)
 * </pre>
 *
 * <p>Thread-safety: stateless; concurrent calls may write disjoint ranges of one file.
 */
final class DirectRangeIo {

    /** Page size direct I/O aligns to. */
    static final int PAGE = 4096;
    /** Largest single write (ByteBuffers are int-indexed); a multiple of the page. */
    private static final int SLICE_BYTES = 1 << 30;

    private DirectRangeIo() {}

    /** Fills a chunk of a range being written. */
    @FunctionalInterface
    interface RangeSource {
        /** Writes the range's bytes from {@code offset} (from the range's start) into all of {@code chunk}. */
        void fill(long offset, MemorySegment chunk) throws IOException;
    }

    /** Target chunk size of {@link #write}. */
    static final long CHUNK_BYTES = 4L << 20;

    /**
     * Writes {@code bytes} bytes from {@code source} into file {@code path} at {@code position}
     * (inside a task, through task memory freed when the task ends): an existing file is written
     * in place; with {@code create}, the file is created or truncated first and forced to disk
     * after. Chunks start at multiples of {@code recordBytes}, so a source of records fills whole
     * records.
     *
     * @return the bytes written
     * @throws IOException naming the file, size and offset
     */
    static long write(String path, long position, long bytes, int recordBytes, boolean create, RangeSource source)
            throws IOException {
        return write(path, position, bytes, recordBytes, create, source, CHUNK_BYTES);
    }

    /** {@link #write} with chunks of about {@code chunkBytes}, for tests. */
    static long write(String path, long position, long bytes, int recordBytes, boolean create, RangeSource source,
                      long chunkBytes) throws IOException {
        long grain = (long) PAGE / gcd(PAGE, recordBytes) * recordBytes;
        long chunk = Math.max(grain, chunkBytes / grain * grain);
        MemorySegment buffer = TaskOutput.allocate(Math.min(bytes, chunk) + PAGE);
        try (FileChannel buffered = FileChannel.open(Path.of(path), create
                ? new StandardOpenOption[] {StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING}
                : new StandardOpenOption[] {StandardOpenOption.WRITE});
             FileChannel direct = openDirect(path, StandardOpenOption.WRITE)) {
            for (long done = 0; done < bytes; ) {
                long at = position + done;
                long end = Math.min(position + bytes, Math.floorDiv(at, grain) * grain + chunk);
                MemorySegment piece = buffer.asSlice(Math.floorMod(at - buffer.address(), PAGE), end - at);
                source.fill(done, piece);
                writePiece(buffered, direct, piece, at);
                done = end - position;
            }
            if (create) {
                buffered.force(false);
            }
        } catch (IOException e) {
            throw new IOException("cannot write " + bytes + " bytes to " + path + " at byte offset " + position + ": "
                    + e.getMessage(), e);
        }
        return bytes;
    }

    /**
     * Writes {@code piece} at file offset {@code at}: its whole pages through {@code direct} (if
     * not null, and if the piece's memory has the same offset within a page as {@code at}), the
     * rest, or all of it where the direct write is refused, through {@code buffered}.
     */
    static void writePiece(FileChannel buffered, FileChannel direct, MemorySegment piece, long at)
            throws IOException {
        long size = piece.byteSize();
        long head = Math.min(size, Math.floorMod(-at, PAGE));
        long body = (size - head) & -PAGE;
        if (direct == null || !piece.isNative() || Math.floorMod(piece.address() - at, PAGE) != 0) {
            head = size;
            body = 0;
        }
        writeFully(buffered, piece.asSlice(0, head), at);
        if (body > 0) {
            try {
                writeFully(direct, piece.asSlice(head, body), at + head);
            } catch (IOException e) {
                // some file systems open O_DIRECT but refuse the writes: the page cache reports a real fault again
                writeFully(buffered, piece.asSlice(head, body), at + head);
            }
        }
        writeFully(buffered, piece.asSlice(head + body), at + head + body);
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /**
     * Bytes {@code [position, position + length)} of file {@code path}, read with
     * {@code O_DIRECT} into task memory (freed when the task ends); null where the file system
     * refuses {@code O_DIRECT} (at open or at the first read).
     *
     * @throws IOException naming the file and offset where it ended early
     */
    static MemorySegment read(String path, long position, long length) throws IOException {
        long first = position & -PAGE;
        long end = position + length;
        long span = ((end + PAGE - 1) & -PAGE) - first;
        try (FileChannel direct = openDirect(path, StandardOpenOption.READ)) {
            if (direct == null) {
                return null;
            }
            MemorySegment block = TaskOutput.allocate(span + PAGE);
            MemorySegment pages = block.asSlice(Math.floorMod(-block.address(), PAGE), span);
            long done = 0;
            while (first + done < end) {
                int n;
                try {
                    n = direct.read(pages.asSlice(done, Math.min(span - done, SLICE_BYTES)).asByteBuffer(), first + done);
                } catch (IOException e) {
                    return null; // O_DIRECT opened but refused: the caller maps the file, which reports a real fault
                }
                done += Math.max(0, n);
                // a direct read returns whole pages except at the end of the file
                if (n <= 0 || (first + done < end && done % PAGE != 0)) {
                    throw new IOException(path + " ended at byte offset " + (first + done) + " while reading bytes "
                            + position + ".." + end);
                }
            }
            return pages.asSlice(position - first, length);
        }
    }

    /** A direct channel, or null where the file system refuses {@code O_DIRECT}. */
    static FileChannel openDirect(String path, StandardOpenOption mode) {
        try {
            return FileChannel.open(Path.of(path), mode, ExtendedOpenOption.DIRECT);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static void writeFully(FileChannel channel, MemorySegment bytes, long position) throws IOException {
        long size = bytes.byteSize();
        for (long done = 0; done < size; ) {
            ByteBuffer slice = bytes.asSlice(done, Math.min(size - done, SLICE_BYTES)).asByteBuffer();
            while (slice.hasRemaining()) {
                done += channel.write(slice, position + done);
            }
        }
    }
}
