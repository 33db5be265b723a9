package dev.croupier.shuffle.kv;

import dev.croupier.shuffle.PackFrame;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * Distinct keys and their aggregate states, off the heap, for one task.
 *
 * <p>Design: key bytes are appended to one memory segment and states to another (both doubled
 * when full, in a confined arena freed by {@link #close}); slot {@code i} is the i-th distinct key.
 * An open-addressing index of {@code int}s (slot + 1, 0 = empty) probed linearly finds a key from
 * the low bits of its 64-bit hash, comparing bytes with {@code MemorySegment.mismatch}. No object
 * per key or value. Confined to the thread that made it.
 */
final class KeyTable implements AutoCloseable {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final Aggregate aggregate;
    private final int stateBytes;
    private final Arena arena = Arena.ofConfined();
    private MemorySegment keys;
    private MemorySegment states;
    private long keyBytes;
    private long[] keyOffset = new long[64];
    private int[] keyLength = new int[64];
    private long[] hashes = new long[64];
    private int size;
    private int[] index = new int[128];

    KeyTable(Aggregate aggregate) {
        this.aggregate = aggregate;
        this.stateBytes = aggregate.stateBytes();
        this.keys = arena.allocate(4096);
        this.states = arena.allocate(Math.max(8, 64L * stateBytes));
    }

    int size() {
        return size;
    }

    /** Folds a raw value into its key's state. */
    void add(MemorySegment block, long keyOffset, int keyLength, long valueOffset, int valueLength) {
        int slot = slotOf(block, keyOffset, keyLength);
        aggregate.add(states, (long) slot * stateBytes, block, valueOffset, valueLength);
    }

    /** Folds a state (of {@code stateBytes}) into its key's state. */
    void merge(MemorySegment block, long keyOffset, int keyLength, long stateOffset) {
        int slot = slotOf(block, keyOffset, keyLength);
        aggregate.merge(states, (long) slot * stateBytes, block, stateOffset);
    }

    /** Folds every entry of state blocks (values are states) into this table. */
    void mergeAll(List<MemorySegment> blocks) {
        for (MemorySegment block : blocks) {
            KvBlock.Cursor c = new KvBlock.Cursor(block);
            while (c.next()) {
                if (c.valueLength() != stateBytes) {
                    throw new dev.croupier.futures.CroupierException(dev.croupier.futures.ErrorCode.BAD_INPUT,
                            "a state of " + c.valueLength() + " bytes at byte offset " + c.valueOffset()
                                    + " where the aggregate keeps " + stateBytes);
                }
                merge(block, c.keyOffset(), c.keyLength(), c.valueOffset());
            }
        }
    }

    /**
     * The keys and their states as {@code partitions} blocks, each key in the block of
     * {@link #partitionOf} its hash; in {@code packs} {@link PackFrame} packs (0: a block each).
     */
    List<MemorySegment> toBlocks(int partitions, int packs) {
        int[] entries = new int[partitions];
        long[] bytes = new long[partitions];
        int[] partitionOfSlot = new int[size];
        for (int i = 0; i < size; i++) {
            int p = partitionOf(hashes[i], partitions);
            partitionOfSlot[i] = p;
            entries[p]++;
            bytes[p] += KvBlock.entryBytes(keyLength[i], stateBytes);
        }
        for (int p = 0; p < partitions; p++) {
            bytes[p] += KvBlock.HEADER_BYTES;
        }
        MemorySegment[] blocks = new MemorySegment[partitions];
        List<MemorySegment> out = PackFrame.allocate(bytes, packs, blocks);
        KvBlock.Builder[] builders = new KvBlock.Builder[partitions];
        for (int p = 0; p < partitions; p++) {
            builders[p] = new KvBlock.Builder(blocks[p], entries[p]);
        }
        for (int i = 0; i < size; i++) {
            builders[partitionOfSlot[i]].add(keys, keyOffset[i], keyLength[i], states, (long) i * stateBytes, stateBytes);
        }
        for (KvBlock.Builder b : builders) {
            b.build();
        }
        return out;
    }

    /** A key's partition: from the hash's high half, so that it is independent of the index's low bits. */
    static int partitionOf(long hash, int partitions) {
        return (int) (((hash >>> 32) * partitions) >>> 32);
    }

    /** A 64-bit hash of key bytes: 8 bytes a step, then SplitMix64's finalizer. */
    static long hash(MemorySegment block, long offset, int length) {
        long h = length * 0x9E3779B97F4A7C15L;
        int k = 0;
        for (; k + 8 <= length; k += 8) {
            h = (h ^ block.get(LONG, offset + k)) * 0x9E3779B97F4A7C15L;
            h ^= h >>> 29;
        }
        for (; k < length; k++) {
            h = (h ^ (block.get(ValueLayout.JAVA_BYTE, offset + k) & 0xFF)) * 0x9E3779B97F4A7C15L;
        }
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        return h ^ (h >>> 31);
    }

    private int slotOf(MemorySegment block, long offset, int length) {
        long h = hash(block, offset, length);
        int mask = index.length - 1;
        for (int i = (int) h & mask; ; i = (i + 1) & mask) {
            int s = index[i] - 1;
            if (s < 0) {
                s = insert(block, offset, length, h);
                index[i] = s + 1;
                if (size * 2 > index.length) {
                    rehash();
                }
                return s;
            }
            if (hashes[s] == h && keyLength[s] == length
                    && MemorySegment.mismatch(keys, keyOffset[s], keyOffset[s] + length, block, offset, offset + length) < 0) {
                return s;
            }
        }
    }

    private int insert(MemorySegment block, long offset, int length, long h) {
        if (size == keyOffset.length) {
            keyOffset = Arrays.copyOf(keyOffset, size * 2);
            keyLength = Arrays.copyOf(keyLength, size * 2);
            hashes = Arrays.copyOf(hashes, size * 2);
        }
        keys = ensure(keys, keyBytes + length);
        states = ensure(states, (long) (size + 1) * stateBytes);
        MemorySegment.copy(block, offset, keys, keyBytes, length);
        keyOffset[size] = keyBytes;
        keyLength[size] = length;
        hashes[size] = h;
        keyBytes += length;
        aggregate.init(states, (long) size * stateBytes);
        return size++;
    }

    private MemorySegment ensure(MemorySegment segment, long bytes) {
        if (bytes <= segment.byteSize()) {
            return segment;
        }
        MemorySegment bigger = arena.allocate(Math.max(bytes, segment.byteSize() * 2));
        MemorySegment.copy(segment, 0, bigger, 0, segment.byteSize());
        return bigger;
    }

    private void rehash() {
        int[] bigger = new int[index.length * 2];
        int mask = bigger.length - 1;
        for (int s = 0; s < size; s++) {
            int i = (int) hashes[s] & mask;
            while (bigger[i] != 0) {
                i = (i + 1) & mask;
            }
            bigger[i] = s + 1;
        }
        index = bigger;
    }

    @Override
    public void close() {
        arena.close();
    }
}
