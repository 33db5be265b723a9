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
 * range's whole pages into task memory and returns the range as a slice of them. A direct
 * write needs a page-aligned file offset, length and memory address, and a range rarely starts
 * on a page (a sorted range starts after all lower ranges' bytes). So the writer fills memory
 * from {@link #allocateFor}, which sits at the same offset within a page as the range does in
 * the file; then every whole page goes direct, and only the partial first and last pages of the
 * range (which neighbouring ranges share) go through the page cache. On file systems without
 * {@code O_DIRECT} all of it goes through the page cache, and a read returns null so that the
 * caller maps the file.
 *
 * <pre>
 *  file:    ... | head (buffered) | page | page | ... | page | tail (buffered) | ...
 *               ^ position
 *  memory:  | . | head            | page | page | ... | page | tail            |
 *           ^ page-aligned task memory, the range placed at position mod page
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
     * Task memory (freed when the task ends) for {@code bytes} bytes that {@link #write} will
     * put at file offset {@code position}: it starts at the same offset within a page as
     * {@code position}, so all the range's whole pages can be written direct.
     */
    static MemorySegment allocateFor(long position, long bytes) {
        MemorySegment pages = TaskOutput.allocate(bytes + PAGE);
        return pages.asSlice(Math.floorMod(position - pages.address(), PAGE), bytes);
    }

    /**
     * Writes {@code range} into file {@code path} at {@code position}: an existing file is
     * written in place; with {@code create}, the file is created or truncated first and forced to
     * disk after. The range's whole pages go direct if it came from {@link #allocateFor} for this
     * position; otherwise all of it goes through the page cache.
     *
     * @return the bytes written
     * @throws IOException naming the file, size and offset
     */
    static long write(String path, long position, MemorySegment range, boolean create) throws IOException {
        try (FileChannel buffered = FileChannel.open(Path.of(path), create
                ? new StandardOpenOption[] {StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING}
                : new StandardOpenOption[] {StandardOpenOption.WRITE});
             FileChannel direct = openDirect(path, StandardOpenOption.WRITE)) {
            writePiece(buffered, direct, range, position);
            if (create) {
                buffered.force(false);
            }
        } catch (IOException e) {
            throw new IOException("cannot write " + range.byteSize() + " bytes to " + path + " at byte offset "
                    + position + ": " + e.getMessage(), e);
        }
        return range.byteSize();
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
