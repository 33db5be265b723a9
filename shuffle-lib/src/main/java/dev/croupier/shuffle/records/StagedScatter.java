package dev.croupier.shuffle.records;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Appends fixed-size records to many output streams through a small staging area per stream,
 * each flushed whole into its stream once full, so each stream keeps its records' order:
 * software write-combining. A scatter straight into more than {@value #DIRECT_STREAMS_MAX}
 * streams costs twice as much per record here as into fewer (each stream writes its own page,
 * likely more pages than the cores' first-level TLB holds), while the staging areas together
 * stay in the second-level cache and each flush is one copy of a few KiB (docs/benchmarks.md,
 * "Scatters staged"). Into fewer streams, or with large records, a straight copy per record is
 * as fast and copies once: {@link #pays} says which.
 *
 * <p>Layout of the staging memory, one slot of {@code depth} records per stream:
 * <pre>
 *   0             depth*size      2*depth*size           streams*depth*size
 *   | stream 0's   | stream 1's     | ...  | stream S-1's |
 *   | records      | records        |      | records      |
 * </pre>
 *
 * <p>Not thread-safe: one scatter, on one thread. {@link #close} flushes what is staged and frees
 * the staging memory.
 */
final class StagedScatter implements AutoCloseable {

    /** A scatter into at most this many streams is as fast straight, and takes no extra copy. */
    static final int DIRECT_STREAMS_MAX = 64;
    /** Bytes staged per stream: a few records of the usual sizes, flushed as one copy. */
    private static final int STAGE_BYTES = 2048;
    /** Records larger than this are copied straight: a slot would hold too few to matter. */
    private static final int STAGED_RECORD_MAX = STAGE_BYTES / 4;

    private final int size;
    private final MemorySegment[] targets;
    private final long[] next;
    private final int depth;
    private final long slotBytes;
    private final int[] staged;
    private final Arena arena;
    private final MemorySegment stage;

    /**
     * A scatter of {@code size}-byte records into {@code targets.length} streams; stream
     * {@code s} writes {@code targets[s]} from byte {@code next[s]} on, and {@code next} (owned
     * by the scatter from now on) advances as it flushes.
     *
     * @throws IllegalArgumentException if staging does not {@linkplain #pays pay} for these
     */
    StagedScatter(int size, MemorySegment[] targets, long[] next) {
        if (!pays(targets.length, size)) {
            throw new IllegalArgumentException("a straight scatter of " + size + "-byte records into "
                    + targets.length + " streams is as fast as a staged one");
        }
        this.size = size;
        this.targets = targets;
        this.next = next;
        this.depth = STAGE_BYTES / size;
        this.slotBytes = (long) depth * size;
        this.staged = new int[targets.length];
        this.arena = Arena.ofConfined();
        this.stage = arena.allocate(slotBytes * targets.length, Long.BYTES);
    }

    /** Whether a scatter of {@code size}-byte records into {@code streams} streams is faster staged. */
    static boolean pays(int streams, int size) {
        return streams > DIRECT_STREAMS_MAX && size <= STAGED_RECORD_MAX;
    }

    /**
     * Appends record {@code k} of {@code records} (whole records) to stream
     * {@code streamOf[first + k]}, for every k in order. The loop over every record is this one
     * method, whichever kernel scatters, so the JIT compiles it once for all of them.
     */
    void scatter(MemorySegment records, int[] streamOf, int first) {
        // The fields in locals: the JIT would read them again after every copy.
        int size = this.size;
        int depth = this.depth;
        long slotBytes = this.slotBytes;
        int[] staged = this.staged;
        MemorySegment stage = this.stage;
        MemorySegment[] targets = this.targets;
        long[] next = this.next;
        int i = first;
        for (long offset = 0, end = records.byteSize(); offset < end; offset += size, i++) {
            int s = streamOf[i];
            int n = staged[s];
            RecordCopy.copy(records, offset, stage, s * slotBytes + (long) n * size, size);
            if (++n == depth) {
                RecordCopy.copy(stage, s * slotBytes, targets[s], next[s], slotBytes);
                next[s] += slotBytes;
                n = 0;
            }
            staged[s] = n;
        }
    }

    @Override
    public void close() {
        try {
            for (int s = 0; s < staged.length; s++) {
                if (staged[s] > 0) { // a stream may have no records at all, and its target no bytes
                    long bytes = (long) staged[s] * size;
                    MemorySegment.copy(stage, s * slotBytes, targets[s], next[s], bytes);
                    next[s] += bytes;
                    staged[s] = 0;
                }
            }
        } finally {
            arena.close();
        }
    }
}
