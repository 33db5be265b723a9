package dev.croupier.nvme;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The reader threads of one sampler: each claims a chunk of a published fill, reads its
 * sector-aligned span into its own aligned buffer with one positional read, and scatters the
 * chunk's rows into the workspace.
 *
 * <p>Design note: the JDK has no asynchronous disk I/O (its {@code AsynchronousFileChannel}
 * is a thread pool over blocking reads), so reads in flight = reader threads, each blocked in
 * {@code pread}. In buffered mode the reads go through the sampler's own descriptor, advised
 * {@code POSIX_FADV_RANDOM} so no readahead pulls in pages around the span. A blocked thread costs no CPU, and on the measured disk 32 threads reach
 * about 80% of fio's libaio IOPS at the same depth (see docs/nvme-io.md). Work is handed out
 * without locks: fills wait in a FIFO queue, a semaphore holds one permit per unclaimed chunk,
 * and a reader that holds a permit claims the next chunk of the oldest fill with an atomic
 * increment (dropping fills it finds exhausted). With {@code O_DIRECT} the page cache is never
 * touched; in buffered mode each read span is dropped again with {@code POSIX_FADV_DONTNEED}.
 * The consumer owns everything else. Thread-safe as used: {@link #submit} from the consumer,
 * {@link #close} once.
 */
final class ChunkReaders implements AutoCloseable {

    private static final long JOIN_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(30);

    private final Path file;
    private final FileChannel channel;
    /** Descriptor for page-cache advice in buffered mode, or -1. */
    private final int adviceFd;
    private final int rowSize;
    private final long rowCount;
    private final SamplerLayout layout;
    private final ConcurrentLinkedQueue<Workspace.Fill> fills = new ConcurrentLinkedQueue<>();
    private final Semaphore unclaimedChunks = new Semaphore(0);
    private final Thread[] threads;
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private volatile boolean closed;

    ChunkReaders(Path file, FileChannel channel, int adviceFd, int rowSize, long rowCount,
                 SamplerLayout layout, MemorySegment[] ioBuffers) {
        this.file = file;
        this.channel = channel;
        this.adviceFd = adviceFd;
        this.rowSize = rowSize;
        this.rowCount = rowCount;
        this.layout = layout;
        this.threads = new Thread[ioBuffers.length];
        for (int i = 0; i < threads.length; i++) {
            MemorySegment buffer = ioBuffers[i];
            threads[i] = Thread.ofPlatform().daemon().name("croupier-nvme-reader-" + i)
                    .unstarted(() -> run(buffer));
        }
        for (Thread t : threads) {
            t.start();
        }
    }

    /** Publishes a planned fill; its chunks become claimable at once. */
    void submit(Workspace.Fill fill) {
        fills.add(fill);
        unclaimedChunks.release(fill.chunkCount);
    }

    long bytesRead() {
        return bytesRead.sum();
    }

    long reads() {
        return reads.sum();
    }

    private void run(MemorySegment ioBuffer) {
        ByteBuffer target = ioBuffer.asByteBuffer();
        while (true) {
            unclaimedChunks.acquireUninterruptibly();
            if (closed) {
                return;
            }
            Workspace.Fill fill;
            int chunk;
            while (true) {
                // A permit guarantees an unclaimed chunk in some queued fill; exhausted fills
                // at the head are dropped on the way.
                fill = fills.peek();
                chunk = fill.nextChunk.getAndIncrement();
                if (chunk < fill.chunkCount) {
                    break;
                }
                fills.remove(fill);
            }
            try {
                if (fill.failure == null && !closed) {
                    readChunk(fill, chunk, ioBuffer, target);
                }
            } catch (Throwable t) {
                fill.failure = t;
            } finally {
                fill.done.countDown();
            }
        }
    }

    private void readChunk(Workspace.Fill fill, int planIndex, MemorySegment ioBuffer, ByteBuffer target)
            throws IOException {
        Workspace workspace = fill.workspace;
        long chunk = workspace.chunks[planIndex];
        long firstRow = chunk * layout.rowsPerChunk();
        int rows = (int) Math.min(layout.rowsPerChunk(), rowCount - firstRow);
        long start = firstRow * rowSize;
        long end = start + (long) rows * rowSize;
        int alignment = layout.ioAlignment();
        long readStart = SamplerLayout.alignDown(start, alignment);
        int readLength = (int) (SamplerLayout.alignUp(end, alignment) - readStart);
        int needed = (int) (end - readStart);
        long prefixBytes = (long) layout.prefixRows() * rowSize;
        long slot = fill.slot(workspace.firstOrdinals[planIndex]);
        long slotAddress = workspace.memory.address() + prefixBytes + slot * rowSize;
        boolean intoSlot = rows == 1 && readLength == rowSize && slotAddress % alignment == 0;
        MemorySegment dest;
        if (intoSlot) {
            // A whole aligned row: read it straight into its slot, no copy (4 KiB, 64 KiB rows).
            dest = workspace.memory.asSlice(prefixBytes + slot * rowSize, rowSize);
            target = dest.asByteBuffer();
        } else {
            dest = ioBuffer;
            target.clear().limit(readLength);
        }
        int done = 0;
        while (done < needed) {
            // Buffered mode reads through the descriptor advised POSIX_FADV_RANDOM (no readahead).
            long n = adviceFd >= 0 ? Libc.pread(adviceFd, dest, done, readLength - done, readStart + done)
                    : channel.read(target, readStart + done);
            if (n <= 0) {
                throw new EOFException(file + ": end of file at offset " + (readStart + done)
                        + " while reading rows " + firstRow + ".." + (firstRow + rows - 1) + " (bytes "
                        + start + ".." + end + "); was the file truncated?");
            }
            done += (int) n;
        }
        bytesRead.add(done);
        reads.increment();
        if (adviceFd >= 0) {
            int rc = Libc.dropFromPageCache(adviceFd, readStart, readLength);
            if (rc != 0) {
                throw new UncheckedIOException(new IOException(file + ": posix_fadvise(DONTNEED) at offset "
                        + readStart + " failed with error " + rc));
            }
        }
        if (intoSlot) {
            return;
        }
        long source = start - readStart;
        for (int k = 0; k < rows; k++) {
            MemorySegment.copy(ioBuffer, source, workspace.memory, prefixBytes + slot * rowSize, rowSize);
            source += rowSize;
            slot += fill.stride;
            if (slot >= fill.rows) {
                slot -= fill.rows;
            }
        }
    }

    /** Stops the readers after their current read and waits for them. */
    @Override
    public void close() {
        closed = true;
        unclaimedChunks.release(threads.length);
        for (Thread t : threads) {
            try {
                t.join(JOIN_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
