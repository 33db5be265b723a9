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
 * range's whole pages into task memory and returns the range as a slice of them. A direct write
 * needs a page-aligned file offset, length and memory address, and a range rarely starts on a
 * page (a sorted range starts after all lower ranges' bytes). So the caller takes its buffer
 * from {@link #allocate}, which places it at the same offset within a page as the range has in
 * the file; then every whole page of the range is aligned in memory and in the file and goes
 * direct, and only the partial first and last pages (which neighbouring ranges share) go
 * through the page cache. On file systems without {@code O_DIRECT}, or for heap memory, all of
 * it goes through the page cache; a read then returns null and the caller maps the file.
 *
 * <pre>
 *  file:   ... | head (buffered) | page | page | ... | page | tail (buffered) | ...
 *              ^ position        ^ aligned: written direct  ^
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

    /**
     * Memory for {@code bytes} bytes that will be written at file offset {@code position}:
     * inside a task, task output memory (freed when the task ends) whose address has the
     * position's offset within a page.
     */
    static MemorySegment allocate(long bytes, long position) {
        MemorySegment block = TaskOutput.allocate(bytes + PAGE);
        long shift = Math.floorMod(position - block.address(), PAGE);
        return block.asSlice(shift, bytes);
    }

    /**
     * Writes {@code records} into file {@code path} at {@code position}: an existing file is
     * written in place; with {@code create}, the file is created or truncated first and forced
     * to disk after.
     *
     * @return the bytes written
     * @throws IOException naming the file, size and offset
     */
    static long write(MemorySegment records, String path, long position, boolean create) throws IOException {
        long size = records.byteSize();
        long head = Math.min(size, Math.floorMod(-position, PAGE));
        long body = (size - head) & -PAGE;
        boolean aligned = records.isNative() && Math.floorMod(records.address() - position, PAGE) == 0;
        try (FileChannel buffered = FileChannel.open(Path.of(path), create
                ? new StandardOpenOption[] {StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING}
                : new StandardOpenOption[] {StandardOpenOption.WRITE})) {
            FileChannel direct = aligned && body > 0 ? openDirect(path, StandardOpenOption.WRITE) : null;
            if (direct == null) {
                head = size;
                body = 0;
            }
            try {
                writeFully(buffered, records.asSlice(0, head), position);
                if (direct != null) {
                    writeFully(direct, records.asSlice(head, body), position + head);
                }
                writeFully(buffered, records.asSlice(head + body), position + head + body);
            } finally {
                if (direct != null) {
                    direct.close();
                }
            }
            if (create) {
                buffered.force(false);
            }
        } catch (IOException e) {
            throw new IOException("cannot write " + size + " bytes to " + path + " at byte offset " + position + ": "
                    + e.getMessage(), e);
        }
        return size;
    }

    /**
     * Bytes {@code [position, position + length)} of file {@code path}, read with
     * {@code O_DIRECT} into task memory (freed when the task ends); null where the file system
     * refuses {@code O_DIRECT}.
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
            MemorySegment pages = allocate(span, first);
            long done = 0;
            while (first + done < end) {
                int n = direct.read(pages.asSlice(done, Math.min(span - done, SLICE_BYTES)).asByteBuffer(), first + done);
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
