package dev.croupier.shuffle.records;

import dev.croupier.futures.TaskOutput;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The data kernels of jobs whose reducers need their input's order, over {@link RunFrame}
 * blocks: {@link RandomShuffleJob}'s full shuffle (scatter a map input into one run per
 * partition by a seeded uniform draw per record; permute a partition's runs uniformly after
 * putting them back in input order) and {@link RepartitionJob} (scatter by input position;
 * concatenate a partition's runs in input order).
 *
 * <p>No object per record: the scatter draws each record's partition into an {@code int[]} and
 * copies with the sort's map scatter ({@link RecordKernels#copyToBlocks}, staged into many
 * partitions), and the permutation is one {@code int[]} of destinations, filled by an
 * inside-out Fisher-Yates shuffle, followed by one pass that reads the runs in input order and
 * writes each record to its destination. Every output block is {@link TaskOutput} memory, sealed
 * in place. Stateless and thread-safe.
 */
final class RunKernels {

    private RunKernels() {}

    /**
     * Sends each record of {@code records} (map input {@code mapIndex}) to a partition drawn
     * uniformly from the random stream of {@code seed}: {@code partitions} blocks, each one
     * {@link RunFrame} run (records in input order) or empty, in {@code packs} packs (0: a
     * block per partition).
     */
    static List<MemorySegment> scatterRandom(RecordLayout layout, int mapIndex, MemorySegment records,
                                             int partitions, int packs, long seed) {
        int size = layout.recordBytes();
        int[] partitionOf = new int[Math.toIntExact(layout.records(records.byteSize()))];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < partitionOf.length; i++) {
            partitionOf[i] = random.nextInt(partitions);
        }
        long[] counts = RecordKernels.counts(partitionOf, partitions);
        MemorySegment[] blocks = new MemorySegment[partitions];
        List<MemorySegment> out = RunFrame.allocateRuns(mapIndex, counts, size, packs, blocks);
        long[] next = new long[partitions];
        Arrays.fill(next, RunFrame.HEADER_BYTES);
        RecordKernels.copyToBlocks(size, records, partitionOf, blocks, next);
        return out;
    }

    /**
     * Every record of the runs in {@code blocks}, in a uniformly random order drawn from
     * {@code seed}. The runs are first put in input order (by map index), so the result does not
     * depend on how the strategy grouped or ordered the blocks.
     */
    static MemorySegment permute(RecordLayout layout, List<MemorySegment> blocks, long seed, int partition) {
        int size = layout.recordBytes();
        RunFrame.Runs runs = RunFrame.read(blocks, size, partition);
        int n = Math.toIntExact(runs.totalRecords());
        int[] destination = new int[n];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < n; i++) {
            int j = random.nextInt(i + 1);
            destination[i] = destination[j];
            destination[j] = i;
        }
        MemorySegment out = TaskOutput.allocate((long) n * size);
        int c = 0;
        for (int r = 0; r < runs.count(); r++) {
            MemorySegment block = blocks.get(runs.block[r]);
            long offset = runs.dataOffset[r];
            for (long k = 0; k < runs.records[r]; k++, c++, offset += size) {
                RecordCopy.copy(block, offset, out, (long) destination[c] * size, size);
            }
        }
        return out;
    }

    /**
     * Sends each record of {@code records} (map input {@code mapIndex}, whose first record is
     * record {@code first} of all inputs taken in order) to the output whose range holds it:
     * output {@code p} of {@code partitions} holds records {@code [p*total/partitions,
     * (p+1)*total/partitions)}. Each output's records are a contiguous slice of the input, copied
     * once as one run; in {@code packs} packs (0: a block per partition).
     */
    static List<MemorySegment> scatterByPosition(RecordLayout layout, int mapIndex, MemorySegment records,
                                                 long first, long total, int partitions, int packs) {
        int size = layout.recordBytes();
        long end = first + layout.records(records.byteSize());
        long[] counts = new long[partitions];
        long[] from = new long[partitions]; // output p's first record of this input, from its start
        long start = rangeStart(0, total, partitions);
        for (int p = 0; p < partitions; p++) {
            long next = rangeStart(p + 1, total, partitions);
            from[p] = Math.max(first, start) - first;
            counts[p] = Math.max(0, Math.min(end, next) - Math.max(first, start));
            start = next;
        }
        MemorySegment[] runs = new MemorySegment[partitions];
        List<MemorySegment> out = RunFrame.allocateRuns(mapIndex, counts, size, packs, runs);
        for (int p = 0; p < partitions; p++) {
            if (counts[p] > 0) {
                MemorySegment.copy(records, from[p] * size, runs[p], RunFrame.HEADER_BYTES, counts[p] * size);
            }
        }
        return out;
    }

    /** First record of output {@code p}: {@code floor(p * total / partitions)}, without overflow. */
    static long rangeStart(int p, long total, int partitions) {
        return Math.multiplyHigh(total, p) == 0 && total * p >= 0 ? total * p / partitions
                : java.math.BigInteger.valueOf(total).multiply(java.math.BigInteger.valueOf(p))
                        .divide(java.math.BigInteger.valueOf(partitions)).longValueExact();
    }

    /** Every record of the runs in {@code blocks}, in input order (by map index), in one block. */
    static MemorySegment concatInOrder(RecordLayout layout, List<MemorySegment> blocks, int partition) {
        int size = layout.recordBytes();
        RunFrame.Runs runs = RunFrame.read(blocks, size, partition);
        MemorySegment out = TaskOutput.allocate(runs.totalRecords() * size);
        long at = 0;
        for (int r = 0; r < runs.count(); r++) {
            long bytes = runs.records[r] * size;
            MemorySegment.copy(blocks.get(runs.block[r]), runs.dataOffset[r], out, at, bytes);
            at += bytes;
        }
        return out;
    }
}
