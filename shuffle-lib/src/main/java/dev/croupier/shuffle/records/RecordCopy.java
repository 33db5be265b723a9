package dev.croupier.shuffle.records;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The copy every loop over records makes: a record, or a staged run of records, from one segment
 * to another, always as one native copy. {@code MemorySegment.copy} of bytes chooses per call
 * between a Java loop for fewer than 64 bytes and a native copy, and the JIT compiles that choice
 * from one profile that every caller in the process shares: once anything has copied a few bytes
 * (a sampled key, a file name handed to a native call), the short loop is compiled, unrolled, into
 * every kernel that copies records, and those compiles take about twice as long. On two cores a
 * one-shot sort waits for them (docs/benchmarks.md, "Record copies the JIT compiles once"). The
 * copy of elements of a layout has no such branch. Copies outside the kernels' loops (whole
 * blocks, runs) stay with {@code MemorySegment.copy}.
 *
 * <p>Stateless; thread-safe.
 */
final class RecordCopy {

    private RecordCopy() {}

    /**
     * Copies {@code bytes} bytes from {@code src} at {@code srcOffset} to {@code dst} at
     * {@code dstOffset}.
     *
     * @throws IndexOutOfBoundsException if either range is outside its segment
     */
    static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        MemorySegment.copy(src, ValueLayout.JAVA_BYTE, srcOffset, dst, ValueLayout.JAVA_BYTE, dstOffset, bytes);
    }
}
