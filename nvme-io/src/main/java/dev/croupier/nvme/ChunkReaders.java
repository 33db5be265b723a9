package dev.croupier.nvme;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The reader threads of one sampler: each claims a chunk of a published fill, reads its
 * sector-aligned span into its own aligned buffer with one positional read, and scatters the
 * chunk's rows into the workspace.
 *
 * <p>Design note: the JDK has no asynchronous disk I/O (its {@code AsynchronousFileChannel}
 * is a thread pool over blocking reads), so reads in flight = reader threads, each blocked in
 * {@code pread}. In buffered mode the reads go through the sampler's own descriptor, advised
 * {@code POSIX_FADV_RANDOM} so no readahead pulls in pages around the span. A blocked thread costs no CPU, and on the measured disk 32 threads reach
 * about 80% of fio's libaio IOPS at the same depth (see docs/nvme-io.md). Chunks come from a
 * {@link ChunkQueue}, without locks. With {@code O_DIRECT} the page cache is never
 * touched; in buffered mode each read span is dropped again with {@code POSIX_FADV_DONTNEED}.
 * The consumer owns everything else. Thread-safe as used: {@link #submit} from the consumer,
 * {@link #close} once.
 */
final class ChunkReaders extends ReadEngine {


    private final Path file;
    private final FileChannel channel;
    /** Descriptor for page-cache advice in buffered mode, or -1. */
    private final int adviceFd;
    private final int rowSize;
    private final long rowCount;
    private final SamplerLayout layout;

    ChunkReaders(Path file, FileChannel channel, int adviceFd, int rowSize, long rowCount,
                 SamplerLayout layout, MemorySegment[] ioBuffers) {
        this.file = file;
        this.channel = channel;
        this.adviceFd = adviceFd;
        this.rowSize = rowSize;
        this.rowCount = rowCount;
        this.layout = layout;
        Thread[] threads = new Thread[ioBuffers.length];
        for (int i = 0; i < threads.length; i++) {
            MemorySegment buffer = ioBuffers[i];
            threads[i] = Thread.ofPlatform().daemon().name("croupier-nvme-reader-" + i)
                    .unstarted(() -> run(buffer));
        }
        start(threads);
    }

    @Override
    IoEngine engine() {
        return IoEngine.THREADS;
    }

    private void run(MemorySegment ioBuffer) {
        ByteBuffer bufferView = ioBuffer.asByteBuffer();
        ChunkRead read = new ChunkRead(rowSize, rowCount, layout);
        while (true) {
            queue.acquire();
            if (closed) {
                return;
            }
            if (!queue.claimInto(read)) {
                continue;
            }
            Workspace.Fill fill = read.fill;
            try {
                if (!closed) {
                    readChunk(read, ioBuffer, bufferView);
                }
            } catch (Throwable t) {
                fill.failure = t;
            } finally {
                fill.done.countDown();
            }
        }
    }

    private void readChunk(ChunkRead read, MemorySegment ioBuffer, ByteBuffer bufferView) throws IOException {
        MemorySegment dest = read.target(ioBuffer);
        ByteBuffer target = read.intoSlot ? dest.asByteBuffer() : bufferView.clear().limit(read.readLength);
        int done = 0;
        while (done < read.needed) {
            // Buffered mode reads through the descriptor advised POSIX_FADV_RANDOM (no readahead).
            long n = adviceFd >= 0 ? Libc.pread(adviceFd, dest, done, read.readLength - done, read.readStart + done)
                    : channel.read(target, read.readStart + done);
            if (n <= 0) {
                throw new EOFException(file + ": end of file at offset " + (read.readStart + done)
                        + " while reading " + read.describe() + "; was the file truncated?");
            }
            done += (int) n;
        }
        queue.bytesRead.add(done);
        queue.reads.increment();
        if (adviceFd >= 0) {
            int rc = Libc.dropFromPageCache(adviceFd, read.readStart, read.readLength);
            if (rc != 0) {
                throw new UncheckedIOException(new IOException(file + ": posix_fadvise(DONTNEED) at offset "
                        + read.readStart + " failed with error " + rc));
            }
        }
        read.scatter(ioBuffer);
    }
}
