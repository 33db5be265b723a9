package dev.croupier.shuffle.records;

import dev.croupier.futures.TaskOutput;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The data kernels of a sort over fixed-size records: range partitioning, sorting, sampling.
 * None creates an object per record: records stay in memory segments, and the sort works on
 * two primitive arrays (8-byte key prefixes and record indices).
 *
 * <p>Sorting is an LSD radix sort of the prefixes in four 16-bit passes (a pass whose digit is
 * the same for every record is skipped), then an insertion sort of each run of equal prefixes
 * by the remaining key bytes (runs are tiny for random keys), then one permuting copy.
 * Partitioning is a counting pass (binary search over splitter prefixes) and one scatter pass
 * into R blocks. Every output block is taken from {@link TaskOutput}, so inside a task it is
 * the stored object itself and no kernel output is ever copied again. Stateless and thread-safe.
 */
public final class RecordKernels {

    private RecordKernels() {}

    /**
     * Splits {@code records} into {@code splitters.partitions()} blocks by key range. Each block is
     * its own {@link TaskOutput} allocation, so a map task's outputs are written once, in place.
     */
    public static List<MemorySegment> partition(RecordLayout layout, MemorySegment records, Splitters splitters) {
        int size = layout.recordBytes();
        int n = Math.toIntExact(layout.records(records.byteSize()));
        int partitions = splitters.partitions();
        int[] partitionOf = new int[n];
        long[] counts = new long[partitions];
        for (int i = 0; i < n; i++) {
            int p = splitters.partitionOf(records, (long) i * size);
            partitionOf[i] = p;
            counts[p]++;
        }
        MemorySegment[] blocks = new MemorySegment[partitions];
        long[] next = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            blocks[p] = TaskOutput.allocate(counts[p] * size);
        }
        for (int i = 0; i < n; i++) {
            int p = partitionOf[i];
            MemorySegment.copy(records, (long) i * size, blocks[p], next[p], size);
            next[p] += size;
        }
        return List.of(blocks);
    }

    /** Concatenates blocks of one partition without sorting (the merge of a pre-shuffle merge). */
    public static MemorySegment concat(List<MemorySegment> blocks) {
        long total = 0;
        for (MemorySegment b : blocks) {
            total += b.byteSize();
        }
        MemorySegment out = TaskOutput.allocate(total);
        long at = 0;
        for (MemorySegment b : blocks) {
            MemorySegment.copy(b, 0, out, at, b.byteSize());
            at += b.byteSize();
        }
        return out;
    }

    /**
     * All records of {@code blocks}, sorted by key, in one new block. The blocks are not
     * concatenated first: each record is named by its block and offset, and the final permuting
     * copy gathers straight from the blocks.
     */
    public static MemorySegment sort(RecordLayout layout, List<MemorySegment> blocks) {
        int size = layout.recordBytes();
        int keyBytes = layout.keyBytes();
        MemorySegment[] in = blocks.toArray(MemorySegment[]::new);
        if (in.length >= 1 << (64 - OFFSET_BITS)) {
            throw new IllegalArgumentException(in.length + " blocks are more than one sort takes");
        }
        long total = 0;
        for (MemorySegment b : in) {
            total += b.byteSize();
        }
        int n = Math.toIntExact(layout.records(total));
        long[] prefix = new long[n];
        long[] where = new long[n];
        int i = 0;
        for (int b = 0; b < in.length; b++) {
            long records = layout.records(in[b].byteSize());
            for (long r = 0; r < records; r++, i++) {
                long offset = r * size;
                prefix[i] = KeyOrder.prefix(in[b], offset, keyBytes);
                where[i] = ((long) b << OFFSET_BITS) | offset;
            }
        }
        radixSort(prefix, where);
        if (keyBytes > 8) {
            sortTies(in, keyBytes, prefix, where);
        }
        MemorySegment out = TaskOutput.allocate(total);
        for (i = 0; i < n; i++) {
            long w = where[i];
            MemorySegment.copy(in[(int) (w >>> OFFSET_BITS)], w & OFFSET_MASK, out, (long) i * size, size);
        }
        return out;
    }

    /** A record's place in {@link #sort}: block index in the high bits, byte offset in the low 40 (1 TiB). */
    private static final int OFFSET_BITS = 40;
    private static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;

    /** Unsigned LSD radix sort of {@code keys}, carrying {@code values} along. */
    static void radixSort(long[] keys, long[] values) {
        int n = keys.length;
        long[] k2 = new long[n];
        long[] v2 = new long[n];
        int[] count = new int[1 << 16];
        for (int shift = 0; shift < 64; shift += 16) {
            java.util.Arrays.fill(count, 0);
            for (long k : keys) {
                count[(int) ((k >>> shift) & 0xFFFF)]++;
            }
            if (n == 0 || count[(int) ((keys[0] >>> shift) & 0xFFFF)] == n) {
                continue; // every key has this digit: the pass would not move anything
            }
            int sum = 0;
            for (int d = 0; d < count.length; d++) {
                int c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (int i = 0; i < n; i++) {
                int d = (int) ((keys[i] >>> shift) & 0xFFFF);
                int at = count[d]++;
                k2[at] = keys[i];
                v2[at] = values[i];
            }
            System.arraycopy(k2, 0, keys, 0, n);
            System.arraycopy(v2, 0, values, 0, n);
        }
    }

    /** Orders each run of equal prefixes by the key bytes after the prefix (insertion sort: runs are short). */
    private static void sortTies(MemorySegment[] in, int keyBytes, long[] prefix, long[] where) {
        int n = prefix.length;
        int start = 0;
        while (start < n) {
            int end = start + 1;
            while (end < n && prefix[end] == prefix[start]) {
                end++;
            }
            for (int i = start + 1; i < end; i++) {
                long v = where[i];
                int j = i - 1;
                while (j >= start && KeyOrder.compareSuffix(in[(int) (where[j] >>> OFFSET_BITS)], where[j] & OFFSET_MASK,
                        in[(int) (v >>> OFFSET_BITS)], v & OFFSET_MASK, keyBytes) > 0) {
                    where[j + 1] = where[j];
                    j--;
                }
                where[j + 1] = v;
            }
            start = end;
        }
    }

    /** {@code count} keys sampled uniformly (with replacement) from {@code records}, packed {@code keyBytes} apart. */
    public static MemorySegment sampleKeys(RecordLayout layout, MemorySegment records, int count, long seed) {
        long n = layout.records(records.byteSize());
        if (n == 0) {
            return MemorySegment.ofArray(new byte[0]);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int keyBytes = layout.keyBytes();
        MemorySegment out = MemorySegment.ofArray(new byte[count * keyBytes]);
        for (int i = 0; i < count; i++) {
            long r = random.nextLong(n);
            MemorySegment.copy(records, r * layout.recordBytes(), out, (long) i * keyBytes, keyBytes);
        }
        return out;
    }

    /** Whether the records of {@code block} are in key order. */
    public static boolean isSorted(RecordLayout layout, MemorySegment block) {
        long n = layout.records(block.byteSize());
        for (long i = 1; i < n; i++) {
            if (KeyOrder.compare(block, (i - 1) * layout.recordBytes(), block, i * layout.recordBytes(), layout.keyBytes()) > 0) {
                return false;
            }
        }
        return true;
    }

    /** Reads record {@code i}'s key as bytes (for tests and messages, not hot paths). */
    public static byte[] key(RecordLayout layout, MemorySegment block, long i) {
        return block.asSlice(i * layout.recordBytes(), layout.keyBytes()).toArray(ValueLayout.JAVA_BYTE);
    }
}
