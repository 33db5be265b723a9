package dev.croupier.shuffle;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Test blocks: a MemorySegment of little-endian longs, and the functions of a range-partitioned sort over them. */
final class LongBlocks {
    static final long RANGE = 1000;

    private LongBlocks() {}

    static MemorySegment of(long... values) {
        return MemorySegment.ofArray(values.clone());
    }

    static long[] values(MemorySegment block) {
        long[] out = new long[(int) (block.byteSize() / 8)];
        for (int i = 0; i < out.length; i++) {
            out[i] = block.get(ValueLayout.JAVA_LONG_UNALIGNED, i * 8L);
        }
        return out;
    }

    static long[] concat(List<MemorySegment> blocks) {
        List<long[]> parts = new ArrayList<>();
        int n = 0;
        for (MemorySegment b : blocks) {
            long[] v = values(b);
            parts.add(v);
            n += v.length;
        }
        long[] out = new long[n];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /** Range partitioning of values in [0, RANGE): partition r holds [r*RANGE/R, (r+1)*RANGE/R). */
    static List<MemorySegment> rangeMap(MemorySegment input, int partitions) {
        long[] v = values(input);
        List<List<Long>> parts = new ArrayList<>();
        for (int r = 0; r < partitions; r++) {
            parts.add(new ArrayList<>());
        }
        for (long x : v) {
            parts.get((int) (x * partitions / RANGE)).add(x);
        }
        List<MemorySegment> out = new ArrayList<>(partitions);
        for (List<Long> p : parts) {
            out.add(of(p.stream().mapToLong(Long::longValue).toArray()));
        }
        return out;
    }

    /** Per test run, the {@code packs} of every {@link RangePacks#mapPacked} call (embedded clusters only). */
    static final ConcurrentHashMap<String, Queue<Integer>> PACKS_ASKED = new ConcurrentHashMap<>();

    /**
     * {@link #rangeMap} as a {@link PackedMapper}: a pack is longs, its part count, then each
     * part's end (in values), then the parts' values; a part is read back as a view.
     */
    record RangePacks(String run) implements PackedMapper<MemorySegment, MemorySegment> {
        @Override
        public List<MemorySegment> map(int mapIndex, MemorySegment input, int partitions) {
            return rangeMap(input, partitions);
        }

        @Override
        public List<MemorySegment> mapPacked(int mapIndex, MemorySegment input, int partitions, int packs) {
            PACKS_ASKED.computeIfAbsent(run, k -> new ConcurrentLinkedQueue<>()).add(packs);
            List<MemorySegment> blocks = rangeMap(input, partitions);
            List<MemorySegment> out = new ArrayList<>(packs);
            for (int g = 0; g < packs; g++) {
                List<Long> pack = new ArrayList<>();
                List<Long> values = new ArrayList<>();
                for (int p = g; p < partitions; p += packs) {
                    Arrays.stream(values(blocks.get(p))).forEach(values::add);
                    pack.add((long) values.size());
                }
                pack.addFirst((long) pack.size());
                pack.addAll(values);
                out.add(of(pack.stream().mapToLong(Long::longValue).toArray()));
            }
            return out;
        }

        @Override
        public MemorySegment unpack(MemorySegment pack, int k) {
            long parts = pack.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            long start = k == 0 ? 0 : pack.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * k);
            long end = pack.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * (k + 1));
            return pack.asSlice(8 * (1 + parts + start), 8 * (end - start));
        }
    }

    static MemorySegment mergeBlocks(int partition, List<MemorySegment> blocks) {
        return of(concat(blocks));
    }

    static MemorySegment sortBlocks(int partition, List<MemorySegment> blocks) {
        long[] all = concat(blocks);
        Arrays.sort(all);
        return of(all);
    }

    /** Splits a block of one range partition into sub-ranges, for skew handling. */
    static List<MemorySegment> splitBlock(int partition, int partitions, MemorySegment block, int ways) {
        long lo = partition * RANGE / partitions;
        long hi = (partition + 1) * RANGE / partitions;
        List<List<Long>> parts = new ArrayList<>();
        for (int k = 0; k < ways; k++) {
            parts.add(new ArrayList<>());
        }
        for (long x : values(block)) {
            int k = (int) Math.min(ways - 1, (x - lo) * ways / Math.max(1, hi - lo));
            parts.get(k).add(x);
        }
        List<MemorySegment> out = new ArrayList<>(ways);
        for (List<Long> p : parts) {
            out.add(of(p.stream().mapToLong(Long::longValue).toArray()));
        }
        return out;
    }
}
