package dev.croupier.shuffle.records;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
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
 * into a single output buffer, sliced into R blocks. Stateless and thread-safe.
 */
public final class RecordKernels {

    private RecordKernels() {}

    /** Splits {@code records} into {@code splitters.partitions()} blocks by key range; views of one new buffer. */
    public static List<MemorySegment> partition(RecordLayout layout, MemorySegment records, Splitters splitters) {
        int size = layout.recordBytes();
        int n = Math.toIntExact(layout.records(records.byteSize()));
        int partitions = splitters.partitions();
        int[] partitionOf = new int[n];
        long[] counts = new long[partitions + 1];
        for (int i = 0; i < n; i++) {
            int p = splitters.partitionOf(records, (long) i * size);
            partitionOf[i] = p;
            counts[p + 1]++;
        }
        long[] next = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            counts[p + 1] += counts[p];
            next[p] = counts[p] * size;
        }
        MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(records.byteSize())]);
        for (int i = 0; i < n; i++) {
            int p = partitionOf[i];
            MemorySegment.copy(records, (long) i * size, out, next[p], size);
            next[p] += size;
        }
        List<MemorySegment> blocks = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            blocks.add(out.asSlice(counts[p] * size, (counts[p + 1] - counts[p]) * size));
        }
        return blocks;
    }

    /** Concatenates blocks of one partition without sorting (the merge of a pre-shuffle merge). */
    public static MemorySegment concat(List<MemorySegment> blocks) {
        long total = 0;
        for (MemorySegment b : blocks) {
            total += b.byteSize();
        }
        MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(total)]);
        long at = 0;
        for (MemorySegment b : blocks) {
            MemorySegment.copy(b, 0, out, at, b.byteSize());
            at += b.byteSize();
        }
        return out;
    }

    /** All records of {@code blocks}, sorted by key, in one new block. */
    public static MemorySegment sort(RecordLayout layout, List<MemorySegment> blocks) {
        MemorySegment in = blocks.size() == 1 ? blocks.getFirst() : concat(blocks);
        int size = layout.recordBytes();
        int keyBytes = layout.keyBytes();
        int n = Math.toIntExact(layout.records(in.byteSize()));
        long[] prefix = new long[n];
        int[] index = new int[n];
        for (int i = 0; i < n; i++) {
            prefix[i] = KeyOrder.prefix(in, (long) i * size, keyBytes);
            index[i] = i;
        }
        radixSort(prefix, index);
        if (keyBytes > 8) {
            sortTies(in, size, keyBytes, prefix, index);
        }
        MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(in.byteSize())]);
        for (int i = 0; i < n; i++) {
            MemorySegment.copy(in, (long) index[i] * size, out, (long) i * size, size);
        }
        return out;
    }

    /** Unsigned LSD radix sort of {@code keys}, carrying {@code values} along. */
    static void radixSort(long[] keys, int[] values) {
        int n = keys.length;
        long[] k2 = new long[n];
        int[] v2 = new int[n];
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
    private static void sortTies(MemorySegment in, int size, int keyBytes, long[] prefix, int[] index) {
        int n = prefix.length;
        int start = 0;
        while (start < n) {
            int end = start + 1;
            while (end < n && prefix[end] == prefix[start]) {
                end++;
            }
            for (int i = start + 1; i < end; i++) {
                int v = index[i];
                int j = i - 1;
                while (j >= start && KeyOrder.compareSuffix(in, (long) index[j] * size, in, (long) v * size, keyBytes) > 0) {
                    index[j + 1] = index[j];
                    j--;
                }
                index[j + 1] = v;
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
