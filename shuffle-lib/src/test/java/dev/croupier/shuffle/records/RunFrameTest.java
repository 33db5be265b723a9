package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.CroupierException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The run blocks of the random shuffle: input order restored from any grouping, corrupt blocks named. */
class RunFrameTest {

    static final RecordLayout LAYOUT = new RecordLayout(8, 8);

    /** A block of map {@code map}'s run holding {@code values}, copied to the heap as a stored block would be read. */
    static MemorySegment run(int map, long... values) {
        MemorySegment[] runs = new MemorySegment[1];
        RunFrame.allocateRuns(map, new long[] {values.length}, 8, 0, runs);
        MemorySegment block = runs[0];
        for (int i = 0; i < values.length; i++) {
            block.set(ValueLayout.JAVA_LONG_UNALIGNED, RunFrame.HEADER_BYTES + 8L * i, values[i]);
        }
        return MemorySegment.ofArray(block.toArray(ValueLayout.JAVA_BYTE));
    }

    static MemorySegment concat(MemorySegment... blocks) {
        return MemorySegment.ofArray(RecordKernels.concat(List.of(blocks)).toArray(ValueLayout.JAVA_BYTE));
    }

    static long[] values(MemorySegment block) {
        return block.toArray(ValueLayout.JAVA_LONG);
    }

    @Test
    void thePermutationIgnoresHowTheRunsWereGroupedAndOrdered() {
        MemorySegment a = run(0, 1, 2, 3);
        MemorySegment b = run(1, 4, 5);
        MemorySegment c = run(2, 6, 7, 8, 9);
        long[] reference = values(RunKernels.permute(LAYOUT, List.of(a, b, c), 42, 0));
        assertArrayEquals(reference, values(RunKernels.permute(LAYOUT, List.of(c, a, b), 42, 0)));
        assertArrayEquals(reference, values(RunKernels.permute(LAYOUT, List.of(concat(b, a), MemorySegment.NULL, c), 42, 0)));
        long[] sorted = reference.clone();
        java.util.Arrays.sort(sorted);
        assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, sorted);
    }

    @Test
    void aScatterWritesOneTaggedRunPerNonEmptyPartition() {
        MemorySegment input = MemorySegment.ofArray(new long[] {10, 11, 12, 13, 14, 15, 16});
        List<MemorySegment> blocks = RunKernels.scatterRandom(LAYOUT, 5, input, 3, 0, 7);
        assertEquals(3, blocks.size());
        long records = 0;
        for (int p = 0; p < 3; p++) {
            MemorySegment copy = MemorySegment.ofArray(blocks.get(p).toArray(ValueLayout.JAVA_BYTE));
            RunFrame.Runs runs = RunFrame.read(List.of(copy), 8, p);
            records += runs.totalRecords();
            if (copy.byteSize() > 0) {
                assertEquals(1, runs.count());
                assertEquals(5, copy.get(ValueLayout.JAVA_INT_UNALIGNED, 4), "map index in the header");
            }
        }
        assertEquals(7, records);
    }

    @Test
    void aCorruptRunNamesThePartitionTheOffsetAndTheField() {
        MemorySegment good = run(0, 1, 2);
        MemorySegment badVersion = concat(good, run(1, 3));
        badVersion.set(ValueLayout.JAVA_BYTE, good.byteSize(), (byte) 9);
        CroupierException e = assertThrows(CroupierException.class, () -> RunFrame.read(List.of(badVersion), 8, 4));
        assertTrue(e.getMessage().contains("partition 4") && e.getMessage().contains("byte offset " + good.byteSize())
                && e.getMessage().contains("version 9"), e.getMessage());

        MemorySegment tooMany = run(0, 1, 2);
        tooMany.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, 3);
        e = assertThrows(CroupierException.class, () -> RunFrame.read(List.of(tooMany), 8, 0));
        assertTrue(e.getMessage().contains("records = 3") && e.getMessage().contains("byte offset 0"), e.getMessage());

        MemorySegment truncated = MemorySegment.ofArray(new byte[RunFrame.HEADER_BYTES - 1]);
        e = assertThrows(CroupierException.class, () -> RunFrame.read(List.of(truncated), 8, 0));
        assertTrue(e.getMessage().contains("run header"), e.getMessage());

        e = assertThrows(CroupierException.class, () -> RunFrame.read(List.of(run(2, 1), run(2, 5)), 8, 1));
        assertTrue(e.getMessage().contains("two runs of map 2"), e.getMessage());
    }
}
