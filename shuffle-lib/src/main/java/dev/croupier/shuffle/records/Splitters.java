package dev.croupier.shuffle.records;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The R-1 sorted keys that cut the key space into R ranges: partition {@code r} holds keys
 * {@code >= key[r-1]} and {@code < key[r]}. Chosen from samples of the input
 * ({@link #fromSamples}), the sample-based range partitioning of TeraSort and the Exoshuffle
 * sort. Immutable; serializable so that map tasks receive it as an argument.
 */
public final class Splitters implements Serializable {
    private static final long serialVersionUID = 1L;

    private final int keyBytes;
    private final byte[] keys;
    private final long[] prefixes;
    /** The user's order, or null for bytewise (which compares 8-byte prefixes first). */
    private final KeyComparator order;
    /** Leading key bits that index {@link #below}; derived from the splitter count. */
    private final transient int tableBits;
    /**
     * For bytewise order: {@code below[t]} is the number of splitters whose leading
     * {@code tableBits} bits are less than {@code t} (one more entry than there are values of t).
     * A key with leading bits t lies above those and below the splitters from {@code below[t+1]}
     * on, so only splitters in between (almost never any, for keys spread over the key space)
     * need a comparison: a table lookup instead of a binary search of mispredicted branches.
     */
    private final transient int[] below;

    private Splitters(int keyBytes, byte[] keys, KeyComparator order) {
        this.keyBytes = keyBytes;
        this.keys = keys;
        this.order = order;
        int n = keys.length / keyBytes;
        this.prefixes = new long[n];
        MemorySegment s = MemorySegment.ofArray(keys);
        for (int i = 0; i < n; i++) {
            prefixes[i] = KeyOrder.prefix(s, (long) i * keyBytes, keyBytes);
        }
        this.tableBits = Math.clamp(64 - Long.numberOfLeadingZeros(n) + 6, 8, 16);
        this.below = order == null ? belowTable(prefixes, tableBits) : null;
    }

    private static int[] belowTable(long[] prefixes, int bits) {
        int[] below = new int[(1 << bits) + 1];
        int s = 0;
        for (int t = 0; t <= 1 << bits; t++) {
            while (s < prefixes.length && (prefixes[s] >>> (64 - bits)) < t) {
                s++;
            }
            below[t] = s;
        }
        return below;
    }

    /** Rebuilds the transient lookup table after deserialization (tasks receive splitters as arguments). */
    private Object readResolve() {
        return new Splitters(keyBytes, keys, order);
    }

    /** Number of partitions these splitters make. */
    public int partitions() {
        return prefixes.length + 1;
    }

    /**
     * Picks {@code partitions - 1} splitters at even quantiles of the sampled keys (each sample a
     * block of keys, {@code keyBytes} apart).
     */
    public static Splitters fromSamples(List<MemorySegment> samples, int keyBytes, int partitions) {
        return fromSamples(samples, keyBytes, partitions, null);
    }

    /** Like {@link #fromSamples(List, int, int)}, for keys in the order of {@code order} (bytewise if null). */
    public static Splitters fromSamples(List<MemorySegment> samples, int keyBytes, int partitions, KeyComparator order) {
        List<byte[]> all = new ArrayList<>();
        for (MemorySegment s : samples) {
            // One copy per sample, not a slice per key: the driver makes the splitters while every
            // node waits for them, before the JIT has compiled the slices.
            byte[] bytes = s.toArray(ValueLayout.JAVA_BYTE);
            for (int off = 0; off + keyBytes <= bytes.length; off += keyBytes) {
                all.add(Arrays.copyOfRange(bytes, off, off + keyBytes));
            }
        }
        if (order == null) {
            all.sort(Arrays::compareUnsigned);
        } else {
            all.sort((x, y) -> order.compare(MemorySegment.ofArray(x), 0, MemorySegment.ofArray(y), 0));
        }
        byte[] keys = new byte[(partitions - 1) * keyBytes];
        for (int r = 1; r < partitions; r++) {
            byte[] k = all.isEmpty() ? new byte[keyBytes] : all.get((int) ((long) r * all.size() / partitions));
            System.arraycopy(k, 0, keys, (r - 1) * keyBytes, keyBytes);
        }
        return new Splitters(keyBytes, keys, order);
    }

    /** The partition of the record whose key starts at {@code offset} of {@code block}. */
    int partitionOf(MemorySegment block, long offset) {
        if (order != null) {
            return partitionByOrder(block, offset);
        }
        long prefix = KeyOrder.prefix(block, offset, keyBytes);
        int top = (int) (prefix >>> (64 - tableBits));
        int lo = below[top];
        int hi = below[top + 1];
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(prefix, prefixes[mid]);
            if (c == 0 && keyBytes > 8) {
                c = KeyOrder.compareSuffix(block, offset, MemorySegment.ofArray(keys), (long) mid * keyBytes, keyBytes);
            }
            if (c < 0) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    private int partitionByOrder(MemorySegment block, long offset) {
        MemorySegment splitters = MemorySegment.ofArray(keys);
        int lo = 0;
        int hi = prefixes.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (order.compare(block, offset, splitters, (long) mid * keyBytes) < 0) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
