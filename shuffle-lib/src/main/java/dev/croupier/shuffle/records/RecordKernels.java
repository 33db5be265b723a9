package dev.croupier.shuffle.records;

import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.PackFrame;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The data kernels of a sort over fixed-size records: range partitioning, sorting, sampling.
 * None creates an object per record: records stay in memory segments, and the sort works on
 * two primitive arrays (8-byte key prefixes and record indices).
 *
 * <p>Sorting packs each record into one long (the key's leading bits, then the record's
 * ordinal), LSD-radix-sorts those words a byte per pass (a pass whose digit is the same for
 * every record is skipped), orders each run of equal leading bits by the whole key (runs are
 * tiny for random keys; long runs get a merge sort), then makes one permuting copy. A sort of
 * many small records into one block first scatters them into 256 buckets by the leading bits in
 * which their keys differ, then sorts each bucket in cache ({@link #bucketSort}), so that
 * permuting copy no longer misses the cache on every record. Partitioning is a counting pass (a
 * table lookup by leading key bits, {@link Splitters}) and one scatter pass into R blocks,
 * staged where R is large ({@link StagedScatter}). Every
 * output block is taken from {@link TaskOutput}, so inside a task it is the stored object itself
 * and no kernel output is ever copied again. Stateless and thread-safe.
 */
public final class RecordKernels {

    private RecordKernels() {}

    /**
     * Splits {@code records} into {@code splitters.partitions()} blocks by key range. Each block is
     * its own {@link TaskOutput} allocation, so a map task's outputs are written once, in place.
     */
    public static List<MemorySegment> partition(RecordLayout layout, MemorySegment records, Splitters splitters) {
        return partition(layout, records, splitters, 0);
    }

    /** {@link #partition}, into {@code packs} {@link PackFrame} packs (0: a block per partition). */
    static List<MemorySegment> partition(RecordLayout layout, MemorySegment records, Splitters splitters, int packs) {
        return scatter(layout, records, partitionsOf(layout, records, splitters), splitters.partitions(), packs);
    }

    // Each loop over every record is a method of its own: the JIT compiles a long loop twice
    // (on-stack while it runs, then whole), and a compile of a method holding several took in
    // the loops after it too, inlined (docs/benchmarks.md, "Kernels' loops one per method").

    /** The partition of each record of {@code records}. */
    private static int[] partitionsOf(RecordLayout layout, MemorySegment records, Splitters splitters) {
        int size = layout.recordBytes();
        int[] partitionOf = new int[Math.toIntExact(layout.records(records.byteSize()))];
        for (int i = 0; i < partitionOf.length; i++) {
            partitionOf[i] = splitters.partitionOf(records, (long) i * size);
        }
        return partitionOf;
    }

    /**
     * Copies record {@code i} of {@code records} into block {@code partitionOf[i]}, keeping the
     * records' order within each block; the blocks are {@link TaskOutput} memory, one
     * allocation each, or parts of {@code packs} packs ({@link PackFrame#allocate}).
     */
    static List<MemorySegment> scatter(RecordLayout layout, MemorySegment records, int[] partitionOf, int partitions,
                                       int packs) {
        int size = layout.recordBytes();
        long[] bytes = counts(partitionOf, partitions);
        for (int p = 0; p < partitions; p++) {
            bytes[p] *= size;
        }
        MemorySegment[] blocks = new MemorySegment[partitions];
        List<MemorySegment> out = PackFrame.allocate(bytes, packs, blocks);
        copyToBlocks(size, records, partitionOf, blocks, new long[partitions]);
        return out;
    }

    /** How many times each of {@code [0, partitions)} occurs in {@code partitionOf}. */
    static long[] counts(int[] partitionOf, int partitions) {
        long[] counts = new long[partitions];
        for (int p : partitionOf) {
            counts[p]++;
        }
        return counts;
    }

    /**
     * Appends record {@code i} of {@code records} to block {@code partitionOf[i]}, each from its
     * byte {@code next[p]} on ({@code next} advances): straight into a few blocks, staged into
     * many ({@link StagedScatter}).
     */
    static void copyToBlocks(int size, MemorySegment records, int[] partitionOf, MemorySegment[] blocks, long[] next) {
        if (StagedScatter.pays(blocks.length, size)) {
            try (StagedScatter scatter = new StagedScatter(size, blocks, next)) {
                scatter.scatter(records, partitionOf, 0);
            }
            return;
        }
        // Bounded by the records' bytes, as StagedScatter's loop is: counted over partitionOf, the
        // whole compile's checks hoisted out of the loop failed on entry, and it was compiled again.
        int i = 0;
        for (long offset = 0, end = records.byteSize(); offset < end; offset += size, i++) {
            int p = partitionOf[i];
            RecordCopy.copy(records, offset, blocks[p], next[p], size);
            next[p] += size;
        }
    }

    /**
     * The records of {@code blocks}, in order, then permuted uniformly at random (Fisher-Yates
     * over record ordinals, seeded by {@code seed}) within consecutive windows of {@code window}
     * records (the last may be shorter; {@code Long.MAX_VALUE} for one window), into one new block.
     */
    public static MemorySegment permute(RecordLayout layout, List<MemorySegment> blocks, long seed, long window) {
        int size = layout.recordBytes();
        MemorySegment[] in = blocks.toArray(MemorySegment[]::new);
        long[] starts = new long[in.length + 1];
        for (int b = 0; b < in.length; b++) {
            starts[b + 1] = starts[b] + layout.records(in[b].byteSize());
        }
        int n = Math.toIntExact(starts[in.length]);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (long from = 0; from < n; from += window) {
            int lo = (int) from;
            int hi = (int) Math.min(n, from + window);
            for (int i = hi - 1; i > lo; i--) {
                int j = lo + random.nextInt(i - lo + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            if (hi == n) {
                break;
            }
        }
        MemorySegment out = TaskOutput.allocate(starts[in.length] * size);
        for (int i = 0; i < n; i++) {
            int ordinal = order[i];
            int b = blockOf(starts, ordinal);
            RecordCopy.copy(in[b], (ordinal - starts[b]) * size, out, (long) i * size, size);
        }
        return out;
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
     * concatenated first: each record is named by its ordinal across the blocks, and the final
     * permuting copy gathers straight from the blocks.
     */
    public static MemorySegment sort(RecordLayout layout, List<MemorySegment> blocks) {
        return sort(layout, blocks, null);
    }

    /**
     * All records of {@code blocks}, sorted by {@code order} (bytewise unsigned if null), in one
     * new block. A user order cannot be radix-sorted: the record ordinals are merge-sorted with it.
     */
    public static MemorySegment sort(RecordLayout layout, List<MemorySegment> blocks, KeyComparator order) {
        MemorySegment out = TaskOutput.allocate(bytes(layout, blocks));
        sortInto(layout, blocks, order, out);
        return out;
    }

    /** The bytes of {@code blocks}; throws if one is not a whole number of records. */
    static long bytes(RecordLayout layout, List<MemorySegment> blocks) {
        long bytes = 0;
        for (MemorySegment b : blocks) {
            bytes += layout.records(b.byteSize()) * layout.recordBytes();
        }
        return bytes;
    }

    /**
     * Like {@link #sort(RecordLayout, List, KeyComparator)}, into {@code out}, which holds exactly
     * the records' bytes: bucketed ({@link #bucketSort}) where the order is bytewise and the
     * records outgrow the cache, else with one gather in sorted order.
     */
    static void sortInto(RecordLayout layout, List<MemorySegment> blocks, KeyComparator order, MemorySegment out) {
        if (order != null || out.byteSize() / layout.recordBytes() < BUCKETED_MIN_RECORDS
                || !bucketSort(layout, blocks, out)) {
            gatherSorted(layout, blocks, order, out);
        }
    }

    /** Sorts of fewer records than this gather directly: they fit in cache anyway. */
    static final int BUCKETED_MIN_RECORDS = 1 << 16;
    /**
     * Records larger than this gather directly: a gather in random order misses the cache per
     * record, the bucket pass copies per byte, and past 200 to 300 bytes the gather costs less
     * (docs/benchmarks.md, "Which records are bucketed").
     */
    static final int BUCKETED_MAX_RECORD_BYTES = 256;
    /** Largest bucket {@link #bucketSort} copies aside; more skewed keys take the direct gather. */
    private static final long BUCKET_SCRATCH_MAX = 16L << 20;

    /**
     * Bytewise sort in two cache-friendly steps instead of one gather in random order over the
     * whole input (which costs a cache miss or two per record): (1) scatter every record by 8 bits
     * of its key, the highest bits in which the keys differ, into its bucket's place in
     * {@code out}: sequential reads and 256 sequential write streams, staged ({@link StagedScatter});
     * (2) sort each bucket, which for spread keys is a few hundred KiB and stays in cache, by
     * copying it aside and gathering it back in order. Returns false, having written nothing,
     * when one bucket would exceed {@link #BUCKET_SCRATCH_MAX} (keys too alike), all key prefixes
     * are equal, or the records are larger than {@link #BUCKETED_MAX_RECORD_BYTES}.
     */
    static boolean bucketSort(RecordLayout layout, List<MemorySegment> blocks, MemorySegment out) {
        int size = layout.recordBytes();
        if (size > BUCKETED_MAX_RECORD_BYTES) {
            return false;
        }
        long[] prefixes = new long[Math.toIntExact(bytes(layout, blocks) / size)];
        int top = prefixWords(layout, blocks, prefixes, 0);
        if (top < 0) {
            return false;
        }
        // every prefix has the same bits above top, so these 8 bits order the buckets
        int shift = Math.max(0, top - 7);
        int[] bucketOf = new int[prefixes.length];
        long[] next = bucketStarts(prefixes, shift, bucketOf);
        long largest = 0;
        for (int d = 0; d < 256; d++) {
            largest = Math.max(largest, next[d + 1] - next[d]);
        }
        if (largest * size > BUCKET_SCRATCH_MAX) {
            return false;
        }
        long[] starts = next.clone();
        MemorySegment[] targets = new MemorySegment[256];
        java.util.Arrays.fill(targets, out);
        for (int d = 0; d < 256; d++) {
            next[d] *= size;
        }
        try (StagedScatter scatter = new StagedScatter(size, targets, next)) {
            int first = 0;
            for (MemorySegment b : blocks) {
                scatter.scatter(b, bucketOf, first);
                first += Math.toIntExact(b.byteSize() / size);
            }
        }
        sortBuckets(layout, out, starts, largest);
        return true;
    }

    // bucketSort's loops over every record are methods of their own, as partition's are.

    /**
     * Fills {@code words} with one word per record of {@code blocks}, in order: its key prefix
     * ({@link KeyOrder#prefix}) with the bits of {@code ordinalMask} cleared, and the record's
     * ordinal in them (0 keeps the whole prefix). Returns the highest bit in which two of the
     * prefixes differ, -1 if all are equal. The bucket pass and every bucket's sort read their
     * prefixes here, so the JIT compiles one loop for both.
     */
    private static int prefixWords(RecordLayout layout, List<MemorySegment> blocks, long[] words, long ordinalMask) {
        int size = layout.recordBytes();
        int keyBytes = layout.keyBytes();
        long min = -1;
        long max = 0;
        int i = 0;
        for (MemorySegment b : blocks) {
            for (long offset = 0, end = layout.records(b.byteSize()) * size; offset < end; offset += size, i++) {
                long p = KeyOrder.prefix(b, offset, keyBytes);
                words[i] = (p & ~ordinalMask) | (i & ordinalMask);
                if (Long.compareUnsigned(p, min) < 0) {
                    min = p;
                }
                if (Long.compareUnsigned(p, max) > 0) {
                    max = p;
                }
            }
        }
        return 63 - Long.numberOfLeadingZeros(min ^ max);
    }

    /**
     * Where each of the 256 buckets of {@code (prefix >>> shift) & 0xFF} starts, in records, and
     * the end; fills {@code bucketOf} with each record's bucket.
     */
    private static long[] bucketStarts(long[] prefixes, int shift, int[] bucketOf) {
        long[] starts = new long[257];
        for (int i = 0; i < prefixes.length; i++) {
            int d = (int) ((prefixes[i] >>> shift) & 0xFF);
            bucketOf[i] = d;
            starts[1 + d]++;
        }
        for (int d = 1; d <= 256; d++) {
            starts[d] += starts[d - 1];
        }
        return starts;
    }

    /** Sorts each bucket of {@code out} in cache: copied aside, then gathered back in order. */
    private static void sortBuckets(RecordLayout layout, MemorySegment out, long[] starts, long largest) {
        int size = layout.recordBytes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(Math.max(1, largest * size), Long.BYTES);
            for (int d = 0; d < 256; d++) {
                long count = starts[d + 1] - starts[d];
                if (count > 1) {
                    MemorySegment bucket = out.asSlice(starts[d] * size, count * size);
                    MemorySegment aside = scratch.asSlice(0, count * size);
                    MemorySegment.copy(bucket, 0, aside, 0, count * size);
                    gatherSorted(layout, List.of(aside), null, bucket);
                }
            }
        }
    }

    /**
     * {@link #sortInto} with one gather in sorted order: each record is copied once, from
     * wherever it lies, which costs a cache miss or two per record once the blocks outgrow the
     * cache.
     */
    private static void gatherSorted(RecordLayout layout, List<MemorySegment> blocks, KeyComparator order,
                                     MemorySegment out) {
        SortedOrder sorted = sortedOrder(layout, blocks, order);
        if (out.byteSize() != sorted.records() * layout.recordBytes()) {
            throw new IllegalArgumentException("sort output of " + out.byteSize() + " bytes for "
                    + sorted.records() + " records of " + layout.recordBytes() + " bytes");
        }
        sorted.copy(out);
    }

    /**
     * The sorted order of the records of {@code blocks} by {@code order} (bytewise unsigned if
     * null), without moving them: {@link SortedOrder#copy} then gathers them.
     */
    private static SortedOrder sortedOrder(RecordLayout layout, List<MemorySegment> blocks, KeyComparator order) {
        int size = layout.recordBytes();
        int keyBytes = layout.keyBytes();
        MemorySegment[] in = blocks.toArray(MemorySegment[]::new);
        long[] starts = new long[in.length + 1];
        for (int b = 0; b < in.length; b++) {
            starts[b + 1] = starts[b] + layout.records(in[b].byteSize());
        }
        int n = Math.toIntExact(starts[in.length]);
        // One long per record: the key's leading bits above, the record's ordinal below, so the
        // radix passes move a single array and a sorted word names its record.
        int ordinalBits = Math.max(1, 64 - Long.numberOfLeadingZeros(Math.max(1, n - 1)));
        long ordinalMask = (1L << ordinalBits) - 1;
        long[] sorted = new long[n];
        if (order != null) {
            for (int i = 0; i < n; i++) {
                sorted[i] = i;
            }
            mergeSort(sorted, new long[n], 0, n, ordinalMask, (x, y) -> {
                int bx = blockOf(starts, x);
                int by = blockOf(starts, y);
                return order.compare(in[bx], (x - starts[bx]) * size, in[by], (y - starts[by]) * size);
            });
        } else {
            radixSortTop(sorted, ordinalBits, prefixWords(layout, blocks, sorted, ordinalMask));
        }
        if (order == null && keyBytes * 8L > 64 - ordinalBits) {
            sortTies(sorted, ordinalMask, (x, y) -> {
                int bx = blockOf(starts, x);
                int by = blockOf(starts, y);
                return KeyOrder.compare(in[bx], (x - starts[bx]) * size, in[by], (y - starts[by]) * size, keyBytes);
            });
        }
        // The gather visits records in random order: a table of each record's block beats a
        // binary search over the block starts per record.
        int[] blockOfRecord = null;
        if (in.length > 1) {
            blockOfRecord = new int[n];
            for (int b = 0; b < in.length; b++) {
                java.util.Arrays.fill(blockOfRecord, (int) starts[b], (int) starts[b + 1], b);
            }
        }
        return new SortedOrder(size, in, starts, sorted, ordinalMask, blockOfRecord);
    }

    /**
     * Records in sorted order, still in their blocks: one word per sorted position naming its
     * record's ordinal (low bits), and each ordinal's block. Not thread-safe; used by one task.
     */
    private static final class SortedOrder {
        private final int size;
        private final MemorySegment[] in;
        private final long[] starts;
        private final long[] sorted;
        private final long ordinalMask;
        /** Null when there is a single block. */
        private final int[] blockOfRecord;

        private SortedOrder(int size, MemorySegment[] in, long[] starts, long[] sorted, long ordinalMask,
                            int[] blockOfRecord) {
            this.size = size;
            this.in = in;
            this.starts = starts;
            this.sorted = sorted;
            this.ordinalMask = ordinalMask;
            this.blockOfRecord = blockOfRecord;
        }

        long records() {
            return sorted.length;
        }

        /** Copies the records to {@code out} in sorted order. */
        void copy(MemorySegment out) {
            if (blockOfRecord == null) {
                for (int i = 0; i < sorted.length; i++) {
                    RecordCopy.copy(in[0], (sorted[i] & ordinalMask) * size, out, (long) i * size, size);
                }
                return;
            }
            for (int i = 0; i < sorted.length; i++) {
                int ordinal = (int) (sorted[i] & ordinalMask);
                int b = blockOfRecord[ordinal];
                RecordCopy.copy(in[b], (ordinal - starts[b]) * size, out, (long) i * size, size);
            }
        }
    }

    /** The block holding record {@code ordinal}, given each block's first ordinal. */
    private static int blockOf(long[] starts, long ordinal) {
        int lo = 0;
        int hi = starts.length - 2;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= ordinal) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /**
     * Stable unsigned LSD radix sort of {@code words} by their bits above {@code fromBit}, one
     * byte per pass; a pass whose digit is the same in every word is skipped.
     */
    static void radixSort(long[] words, int fromBit) {
        radixSort(words, fromBit, 63);
    }

    /** {@link #radixSort} by the bits from {@code fromBit} to {@code toBit} (inclusive) only. */
    private static void radixSort(long[] words, int fromBit, int toBit) {
        int n = words.length;
        long[] from = words;
        long[] to = new long[n];
        int[] count = new int[256];
        for (int shift = fromBit; shift <= toBit; shift += 8) {
            java.util.Arrays.fill(count, 0);
            for (long w : from) {
                count[(int) (w >>> shift) & 0xFF]++;
            }
            if (n == 0 || count[(int) (from[0] >>> shift) & 0xFF] == n) {
                continue;
            }
            int sum = 0;
            for (int d = 0; d < 256; d++) {
                int c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (long w : from) {
                to[count[(int) (w >>> shift) & 0xFF]++] = w;
            }
            long[] swap = from;
            from = to;
            to = swap;
        }
        if (from != words) {
            System.arraycopy(from, 0, words, 0, n);
        }
    }

    /**
     * The order {@link #radixSort} gives, by fewer passes: only over the highest bits in which the
     * words differ, about log2(n) + 4 of them, which leave runs of a few words sharing those bits;
     * each run is then put in order by the whole word (key bits, then ordinal: stable) by an
     * insertion sort, or, when keys share so many bits that a run is long, by the full radix
     * sort of that run. For the 2,600 random keys of a bucket, two passes instead of six.
     * {@code top} is the highest bit in which two of the words differ, -1 if none: the
     * {@link #prefixWords} that made them knows it.
     */
    static void radixSortTop(long[] words, int fromBit, int top) {
        int n = words.length;
        if (n < 2 || top < fromBit) {
            return;
        }
        int wanted = 64 - Long.numberOfLeadingZeros(n) + 4;
        int lowest = Math.max(fromBit, top + 1 - wanted);
        radixSort(words, lowest, top);
        if (lowest == fromBit) {
            return;
        }
        int start = 0;
        while (start < n) {
            long bits = words[start] >>> lowest;
            int end = start + 1;
            while (end < n && words[end] >>> lowest == bits) {
                end++;
            }
            if (end - start > INSERTION_SORT_MAX) {
                long[] part = java.util.Arrays.copyOfRange(words, start, end);
                radixSort(part, fromBit, lowest - 1);
                System.arraycopy(part, 0, words, start, part.length);
            } else {
                for (int i = start + 1; i < end; i++) {
                    long w = words[i];
                    int j = i - 1;
                    while (j >= start && Long.compareUnsigned(words[j], w) > 0) {
                        words[j + 1] = words[j];
                        j--;
                    }
                    words[j + 1] = w;
                }
            }
            start = end;
        }
    }

    /** Compares two records by their ordinals. */
    @FunctionalInterface
    private interface OrdinalOrder {
        int compare(long x, long y);
    }

    /**
     * Orders each run of words with equal key bits by the whole keys: insertion sort for the
     * short runs random keys give, a stable merge sort for long ones (many shared leading bytes).
     */
    private static void sortTies(long[] words, long ordinalMask, OrdinalOrder order) {
        int n = words.length;
        long[] scratch = null;
        int start = 0;
        while (start < n) {
            long bits = words[start] & ~ordinalMask;
            int end = start + 1;
            while (end < n && (words[end] & ~ordinalMask) == bits) {
                end++;
            }
            if (end - start > INSERTION_SORT_MAX) {
                if (scratch == null) {
                    scratch = new long[n];
                }
                mergeSort(words, scratch, start, end, ordinalMask, order);
            } else if (end - start > 1) {
                insertionSort(words, start, end, ordinalMask, order);
            }
            start = end;
        }
    }

    private static final int INSERTION_SORT_MAX = 24;

    private static void insertionSort(long[] words, int from, int to, long ordinalMask, OrdinalOrder order) {
        for (int i = from + 1; i < to; i++) {
            long v = words[i];
            int j = i - 1;
            while (j >= from && order.compare(words[j] & ordinalMask, v & ordinalMask) > 0) {
                words[j + 1] = words[j];
                j--;
            }
            words[j + 1] = v;
        }
    }

    private static void mergeSort(long[] words, long[] scratch, int from, int to, long ordinalMask, OrdinalOrder order) {
        if (to - from <= INSERTION_SORT_MAX) {
            insertionSort(words, from, to, ordinalMask, order);
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(words, scratch, from, mid, ordinalMask, order);
        mergeSort(words, scratch, mid, to, ordinalMask, order);
        System.arraycopy(words, from, scratch, from, to - from);
        int a = from;
        int b = mid;
        for (int k = from; k < to; k++) {
            if (b >= to || (a < mid && order.compare(scratch[a] & ordinalMask, scratch[b] & ordinalMask) <= 0)) {
                words[k] = scratch[a++];
            } else {
                words[k] = scratch[b++];
            }
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

    /** Whether the records of {@code block} are in bytewise key order. */
    public static boolean isSorted(RecordLayout layout, MemorySegment block) {
        return isSorted(layout, block, null);
    }

    /** Whether the records of {@code block} are in the order of {@code order} (bytewise if null). */
    public static boolean isSorted(RecordLayout layout, MemorySegment block, KeyComparator order) {
        long n = layout.records(block.byteSize());
        int size = layout.recordBytes();
        for (long i = 1; i < n; i++) {
            int c = order == null ? KeyOrder.compare(block, (i - 1) * size, block, i * size, layout.keyBytes())
                    : order.compare(block, (i - 1) * size, block, i * size);
            if (c > 0) {
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
