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
 * Writes a range of bytes into a file at a given position, its whole pages with
 * {@code O_DIRECT}.
 *
 * <p>Design note: on the virtual machines this project is measured on, a page-cache write costs
 * a CPU copy into freshly faulted pages plus writeback, about one core-second per 0.5 GB
 * (docs/benchmarks.md), where a direct write is a DMA from the caller's memory. A direct write
 * needs a page-aligned file offset, length and memory address, and a range rarely starts on a
 * page (a sorted range starts after all lower ranges' bytes). So the caller takes its buffer
 * from {@link #allocate}, which places it at the same offset within a page as the range has in
 * the file; then every whole page of the range is aligned in memory and in the file and goes
 * direct, and only the partial first and last pages (which neighbouring ranges share) go
 * through the page cache. On file systems without {@code O_DIRECT}, or for heap memory, all of
 * it goes through the page cache.
 *
 * <pre>
 *  file:   ... | head (buffered) | page | page | ... | page | tail (buffered) | ...
 *              ^ position        ^ aligned: written direct  ^
 * </pre>
 *
 * <p>Thread-safety: stateless; concurrent calls may write disjoint ranges of one file.
 */
final class FileRangeWriter {

    /** Page size direct writes align to. */
    static final int PAGE = 4096;
    /** Largest single write (ByteBuffers are int-indexed); a multiple of the page. */
    private static final int SLICE_BYTES = 1 << 30;

    private FileRangeWriter() {}

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
            FileChannel direct = aligned && body > 0 ? openDirect(path) : null;
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

    /** A direct channel for writing, or null where the file system refuses {@code O_DIRECT}. */
    private static FileChannel openDirect(String path) {
        try {
            return FileChannel.open(Path.of(path), StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
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
