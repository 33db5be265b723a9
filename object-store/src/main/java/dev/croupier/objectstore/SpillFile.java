package dev.croupier.objectstore;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One fused spill file: an append-only file of {@link SpillFrame frames}, written by the spill
 * writer thread and read by restores, with a count of the live objects it holds.
 *
 * <p>Design note: many objects share a file so that spilling issues few, large, sequential
 * writes (the Exoshuffle paper's "fusing"); a file is closed for appends once it reaches the
 * store's {@code spillFileBytes}, and deleted as soon as it is closed for appends and its last
 * object is dead (freed or restored-and-deleted). Reads use positional I/O on channels of their
 * own, so they need no lock against the appender.
 *
 * <p>Where the file system allows it, the file is written and read with {@code O_DIRECT}: on a
 * virtual machine, a page-cache write of spilled bytes costs a full CPU copy into freshly
 * allocated (host-faulted) pages plus writeback, where a direct write is a DMA from the store's
 * memory (see docs/benchmarks.md). Elsewhere (a file system that refuses {@code O_DIRECT} at
 * open or at the first write, or an LZ4 store, whose frames are not page-sized) it uses the page
 * cache; the layout is the same.
 *
 * <p>Thread-safety: {@link #end()} and the appending methods are used by the spill writer
 * only; the counters are guarded by the store's lock; positional reads are safe from any thread.
 */
final class SpillFile {

    final int number;
    final Path path;
    /** The spill thread's channel, for appends; readers open their own ({@link #openForReading}). */
    final FileChannel channel;
    /** Whether {@link #channel} and readers bypass the page cache ({@code O_DIRECT}). */
    final boolean direct;

    /** Bytes of complete frames (the append position); written by the spill writer. */
    private volatile long end;
    /** Objects whose spill copy lives here and is not dead; guarded by the store's lock. */
    int liveObjects;
    /** Frame bytes of those objects' copies; guarded by the store's lock. */
    long liveBytes;
    /** Compaction prefetch rounds since a copy here last died; guarded by the store's lock. */
    int compactPrefetches;
    /** Closed for appends; guarded by the store's lock. */
    boolean full;
    /** Deleted from disk; guarded by the store's lock. */
    boolean deleted;

    private SpillFile(int number, Path path, FileChannel channel, boolean direct, long end) {
        this.number = number;
        this.path = path;
        this.channel = channel;
        this.direct = direct;
        this.end = end;
    }

    /**
     * Creates a spill file holding just its header, padded to a page.
     *
     * @param dir the store's spill directory
     * @param number the file's sequence number
     * @param tryDirect whether to open it {@code O_DIRECT} where the file system allows
     * @return the file
     * @throws IOException if the header cannot be written (the file is removed again)
     */
    static SpillFile create(Path dir, int number, boolean tryDirect) throws IOException {
        Path path = dir.resolve(String.format("spill-%06d.dat", number));
        ByteBuffer header = SpillFrame.pages(1);
        SpillFrame.writeFileHeader(header, number, System.currentTimeMillis());
        if (tryDirect) {
            try {
                FileChannel direct = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
                try {
                    // the header's page is also the probe: some file systems open O_DIRECT but refuse the writes
                    writeHeader(direct, header);
                    return new SpillFile(number, path, direct, true, SpillFrame.PAGE);
                } catch (IOException e) {
                    direct.close();
                    throw e;
                }
            } catch (IOException | UnsupportedOperationException e) {
                // no O_DIRECT here (a file system may refuse it after creating the file): use the page cache
                Files.deleteIfExists(path);
            }
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            writeHeader(channel, header);
            return new SpillFile(number, path, channel, false, SpillFrame.PAGE);
        } catch (IOException e) {
            channel.close();
            Files.deleteIfExists(path);
            throw e;
        }
    }

    private static void writeHeader(FileChannel channel, ByteBuffer header) throws IOException {
        header.clear();
        while (header.hasRemaining()) {
            channel.write(header, header.position());
        }
    }

    /** Returns the length of the complete frames. */
    long end() {
        return end;
    }

    /** Publishes a longer end after frames up to {@code newEnd} are fully written. */
    void advance(long newEnd) {
        end = newEnd;
    }

    /** Cuts off a partial append after a failed write, so the file keeps only complete frames. */
    void truncateToEnd() throws IOException {
        channel.truncate(end);
    }

    /** Closes and deletes the file. Called under the store's lock once no reader can use it. */
    void delete() throws IOException {
        deleted = true;
        channel.close();
        Files.deleteIfExists(path);
    }

    /**
     * Opens a channel of the caller's own for reading. The file's {@link #channel} belongs to the
     * spill thread: a {@code FileChannel} is an interruptible channel, and an interrupt of any
     * thread blocked in it closes it for every thread. Readers are tasks of any node (a node
     * kill interrupts its workers, some of them reading a neighbour's spill file), so each read
     * goes through a channel that only its own thread can close.
     */
    FileChannel openForReading() throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ);
    }

    /** Like {@link #openForReading}, bypassing the page cache; only where {@link #direct}. */
    FileChannel openForDirectReading() throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
    }

    /** Reads exactly {@code buffer.remaining()} bytes at {@code position} through {@code reader}. */
    void readFully(FileChannel reader, ByteBuffer buffer, long position) throws IOException {
        long p = position;
        while (buffer.hasRemaining()) {
            int n = reader.read(buffer, p);
            if (n < 0) {
                throw new IOException("spill file " + path + " ends at " + p + " before the frame does");
            }
            p += n;
        }
    }

    @Override
    public String toString() {
        return path.toString();
    }
}
