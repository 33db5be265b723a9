package dev.croupier.nvme;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The AIO read engine: a few loop threads (two on a 2-vCPU machine) each keep their share of
 * the reads in flight through Linux native AIO and scatter each chunk's rows as its read
 * completes, the way fio's libaio engine drives a disk.
 *
 * <p>Design note: with {@link ChunkReaders}, every completion wakes a blocked thread, which
 * copies its rows before it issues its next read; on a 2-vCPU machine those wake-ups and
 * copies took reads out of flight, and 64 KiB-chunk sampling reached 60-78% of fio's libaio
 * bandwidth. Here a loop reaps every completion that is in with one system call and refills
 * its queue (a call per read, {@link Loop#submitMore}) before it copies any rows: each read in
 * flight has two buffers (a pair of buffer, iocb and planned read per buffer), so the next read
 * goes into a free one while the finished one is scattered. Without that, the disk waited
 * during each copy and this engine read about 1.0 GiB/s where threads read 1.3. One loop was
 * still not enough for 100-byte rows, whose scatter (655 rows per 64 KiB read) kept a single
 * thread busy, so there is one loop per core up to one per 4 reads in flight, each with its
 * own AIO context and its share of the pairs.
 * Chunks come from a {@link ChunkQueue}, as for {@link ChunkReaders}. A loop blocks waiting
 * for a chunk only when it has nothing in flight, and otherwise in {@code io_getevents}.
 * Thread-safe as used: {@link #submit} from the consumer, {@link #close} once.
 */
final class AioReaders extends ReadEngine {

    /** Fewest reads in flight per loop: below that a loop's batching stops paying. */
    private static final int MIN_DEPTH_PER_LOOP = 4;

    private final Path file;
    private final int fd;
    private final Loop[] loops;
    /** Set when a loop itself failed; every fill from then on fails with it. */
    private volatile Throwable fatal;

    /**
     * @param fd a descriptor of {@code file} opened {@code O_DIRECT}; the caller closes it after {@link #close}
     * @param ioBuffers two aligned buffers per read in flight
     * @throws IOException if the kernel refuses an AIO context
     */
    AioReaders(Path file, int fd, int rowSize, long rowCount, SamplerLayout layout, MemorySegment[] ioBuffers)
            throws IOException {
        this.file = file;
        this.fd = fd;
        int depth = ioBuffers.length / 2;
        int count = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), depth / MIN_DEPTH_PER_LOOP));
        this.loops = new Loop[count];
        try {
            for (int i = 0; i < count; i++) {
                // Loop i gets depth / count reads in flight (the first depth % count one more), two pairs each.
                int from = depth * i / count;
                int to = depth * (i + 1) / count;
                loops[i] = new Loop(Arrays.copyOfRange(ioBuffers, 2 * from, 2 * to), rowSize, rowCount, layout);
            }
        } catch (IOException | RuntimeException e) {
            for (Loop l : loops) {
                if (l != null) {
                    LinuxAio.destroy(l.ctx);
                }
            }
            throw e;
        }
        Thread[] threads = new Thread[count];
        for (int i = 0; i < count; i++) {
            threads[i] = Thread.ofPlatform().daemon().name("croupier-nvme-aio-" + i).unstarted(loops[i]::run);
        }
        start(threads);
    }

    @Override
    void submit(Workspace.Fill fill) {
        super.submit(fill);
        if (fatal != null) {
            failAll(fatal);
        }
    }

    @Override
    IoEngine engine() {
        return IoEngine.AIO;
    }

    /** One loop thread: its AIO context, its read pairs and their state, all confined to it. */
    private final class Loop {
        private final long ctx;
        private final int depth;
        private final MemorySegment[] buffers;
        private final ChunkRead[] reads;
        private final int[] free;
        private int freeCount;
        private int inFlight;

        Loop(MemorySegment[] buffers, int rowSize, long rowCount, SamplerLayout layout) throws IOException {
            this.buffers = buffers;
            this.depth = buffers.length / 2;
            this.reads = new ChunkRead[buffers.length];
            this.free = new int[buffers.length];
            for (int i = 0; i < reads.length; i++) {
                reads[i] = new ChunkRead(rowSize, rowCount, layout);
                free[i] = reads.length - 1 - i;
            }
            this.freeCount = reads.length;
            this.ctx = LinuxAio.setup(depth);
        }

        void run() {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment iocbArray = arena.allocate((long) LinuxAio.IOCB_BYTES * reads.length, 8);
                // One iocb per read pair, sliced once: the per-read path makes no objects.
                MemorySegment[] iocbs = new MemorySegment[reads.length];
                for (int p = 0; p < iocbs.length; p++) {
                    iocbs[p] = iocbArray.asSlice((long) p * LinuxAio.IOCB_BYTES, LinuxAio.IOCB_BYTES);
                }
                MemorySegment pointer = arena.allocate(ValueLayout.ADDRESS);
                MemorySegment events = arena.allocate((long) LinuxAio.EVENT_BYTES * depth, 8);
                MemorySegment state = Libc.callState(arena);
                int[] completed = new int[depth];
                long[] results = new long[depth];
                while (true) {
                    submitMore(iocbs, pointer, state, true);
                    if (inFlight == 0) {
                        if (closed) {
                            return;
                        }
                        continue;
                    }
                    int n = LinuxAio.getEvents(ctx, events, depth, state);
                    for (int i = 0; i < n; i++) {
                        completed[i] = (int) LinuxAio.eventData(events, i);
                        results[i] = LinuxAio.eventResult(events, i);
                    }
                    inFlight -= n;
                    // Refill the queue before copying: the other buffer of each pair takes the
                    // next read, so the disk never waits while rows are scattered.
                    submitMore(iocbs, pointer, state, false);
                    for (int i = 0; i < n; i++) {
                        int p = completed[i];
                        complete(reads[p], buffers[p], results[i]);
                        free[freeCount++] = p;
                    }
                }
            } catch (IOException | RuntimeException | Error e) {
                // io_getevents itself failed: no read of this loop can complete any more.
                fatal = e;
                failAll(e);
            } finally {
                LinuxAio.destroy(ctx);
            }
        }

        /**
         * Claims chunks and submits their reads, each with an {@code io_submit} of its own, until
         * {@code depth} are in flight or no chunk is unclaimed. Blocks for a chunk only if
         * {@code mayBlock} and nothing is in flight. One call per read starts each read at once,
         * as fio does: reads submitted in one call after a batch of completions went to the disk
         * together and came back together, so a loop's queue emptied before its thread woke: 4 KiB
         * rows one per read ran at 62,077-63,583 reads/s against 67,573-70,765 one by one, with
         * fio's libaio at 72,795-74,216 (docs/benchmarks.md, "Reads submitted one by one").
         */
        private void submitMore(MemorySegment[] iocbs, MemorySegment pointer, MemorySegment state, boolean mayBlock) {
            while (freeCount > 0 && inFlight < depth && !closed
                    && (mayBlock && inFlight == 0 ? acquire() : queue.tryAcquire())) {
                int p = free[freeCount - 1];
                if (closed || !queue.claimInto(reads[p])) {
                    continue;
                }
                freeCount--;
                ChunkRead read = reads[p];
                LinuxAio.prepareRead(iocbs[p], p, fd, read.targetAddress(buffers[p]), read.readLength, read.readStart);
                pointer.set(ValueLayout.ADDRESS, 0, iocbs[p]);
                long n = LinuxAio.submit(ctx, pointer, state);
                if (n <= 0) {
                    // Not queued: fail the read's fill, as a failed read would.
                    read.fill.failure = new IOException(file + ": io_submit failed: errno " + -n);
                    read.fill.done.countDown();
                    free[freeCount++] = p;
                    return;
                }
                inFlight++;
            }
        }
    }

    private boolean acquire() {
        queue.acquire();
        return true;
    }

    /** Fails every fill a consumer may wait on: queued ones and those with reads in flight. */
    private void failAll(Throwable e) {
        queue.forEachFill(f -> release(f, e));
        for (Loop l : loops) {
            for (ChunkRead r : l.reads) {
                if (r.fill != null) {
                    release(r.fill, e);
                }
            }
        }
    }

    private static void release(Workspace.Fill f, Throwable e) {
        f.failure = e;
        while (f.done.getCount() > 0) {
            f.done.countDown();
        }
    }

    private void complete(ChunkRead read, MemorySegment buffer, long result) {
        Workspace.Fill fill = read.fill;
        try {
            if (result < 0) {
                throw new IOException(file + ": read of " + read.readLength + " bytes at offset " + read.readStart
                        + " failed: errno " + -result);
            }
            if (result < read.needed) {
                throw new EOFException(file + ": end of file at offset " + (read.readStart + result)
                        + " while reading " + read.describe() + "; was the file truncated?");
            }
            queue.bytesRead.add(result);
            queue.reads.increment();
            read.scatter(buffer);
        } catch (Throwable t) {
            fill.failure = t;
        } finally {
            fill.done.countDown();
        }
    }
}
