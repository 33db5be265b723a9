package dev.croupier.nvme;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One of the sampler's two workspaces: rows laid out back to back, a prefix of
 * {@code prefixRows} rows and a body of {@code workspaceRows} rows, plus the plan of its
 * current fill.
 *
 * <p>Design note: the consumer thread owns the plan arrays between fills and writes them
 * before it publishes a {@link Fill} through the reader queue; readers only read them and
 * write disjoint rows of the body, so no lock is needed. A fill is a list of whole chunks;
 * the {@code i}-th row of the fill (counting through the chunks in plan order) lands in body
 * slot {@code (i * stride + offset) mod rows}, with {@code stride} coprime to {@code rows}
 * and close to {@code rows / phi}: the golden-ratio step puts neighbours of one chunk as far
 * apart as possible (a Weyl sequence), at the cost of a multiply once per chunk and an add
 * per row, where a random permutation would cost a hash per row.
 */
final class Workspace {

    /** Golden ratio conjugate, {@code 1 / phi}. */
    private static final double PHI_CONJUGATE = 0.6180339887498949;

    final MemorySegment memory;
    /** Chunk index of each planned chunk. */
    final long[] chunks;
    /** Fill ordinal of each planned chunk's first row. */
    final int[] firstOrdinals;
    /** The fill in progress or last completed; written only by the consumer thread. */
    Fill fill;

    Workspace(MemorySegment memory, int planChunks) {
        this.memory = memory;
        this.chunks = new long[planChunks];
        this.firstOrdinals = new int[planChunks];
    }

    /** The step of the scatter for a fill of {@code rows} rows: coprime to it, near rows / phi. */
    static long stride(int rows) {
        long s = Math.max(1, Math.round(rows * PHI_CONJUGATE));
        while (gcd(s, rows) != 1) {
            s++;
        }
        return s % Math.max(1, rows);
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /**
     * One filling of a workspace, shared by the reader threads: they claim chunks with
     * {@link #nextChunk} and count each one (read or failed) down on {@link #done}.
     */
    static final class Fill {
        final Workspace workspace;
        final int chunkCount;
        final int rows;
        final long stride;
        final long offset;
        final AtomicInteger nextChunk = new AtomicInteger();
        final CountDownLatch done;
        /** First failure of any reader; the consumer rethrows it. */
        volatile Throwable failure;

        Fill(Workspace workspace, int chunkCount, int rows, long stride, long offset) {
            this.workspace = workspace;
            this.chunkCount = chunkCount;
            this.rows = rows;
            this.stride = stride;
            this.offset = offset;
            this.done = new CountDownLatch(chunkCount);
        }

        /** Body slot of the fill's {@code ordinal}-th row. */
        long slot(long ordinal) {
            // ordinal, stride and offset are below 2^31, so the product cannot overflow.
            return (ordinal * stride + offset) % rows;
        }
    }
}
