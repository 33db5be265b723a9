package dev.croupier.objectstore;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Best-fit allocator of byte ranges in a region of fixed size, with immediate coalescing.
 *
 * <p>Design note: free blocks are kept twice, by offset (a {@link TreeMap}, to find and merge
 * neighbours on free) and by (size, offset) (a {@link TreeSet}, to find the smallest block that
 * fits). Allocation and free are O(log n) in the number of free blocks. Best fit with
 * address-ordered coalescing is the policy Wilson et al. ("Dynamic Storage Allocation: A Survey")
 * found to fragment least on real traces; size classes would waste up to half of a block on the
 * 1 KiB..64 MiB objects a shuffle produces, and the capacity here is a hard limit. Every block
 * is a multiple of {@link #ALIGNMENT} so object bytes start on a cache line. Blocks of at least
 * {@link #PAGE_ALIGNED_MIN} bytes start on a page and are whole pages, because the spill writer
 * and restores move them with {@code O_DIRECT}, which needs page-aligned memory (and a page-sized
 * tail costs a large object under 6%).
 *
 * <p>Thread-safety: not thread-safe; the store calls it under its lock. It is called once per
 * object, never per record.
 */
final class FreeListAllocator {

    /** Granularity and alignment of every block, one cache line. */
    static final long ALIGNMENT = 64;

    /** Blocks of at least this size start at a multiple of {@link #PAGE} and are whole pages. */
    static final long PAGE_ALIGNED_MIN = 64 << 10;
    /** The page size direct I/O aligns to (4 KiB: the largest logical block of common disks). */
    static final long PAGE = 4096;
    /** Size candidates examined for a page-aligned start before taking a block that surely has one. */
    private static final int ALIGNED_FIT_PROBES = 16;

    private record Block(long offset, long size) { }

    private static final Comparator<Block> BY_SIZE =
            Comparator.comparingLong(Block::size).thenComparingLong(Block::offset);

    private long capacity;
    private final TreeMap<Long, Long> freeByOffset = new TreeMap<>();
    private final TreeSet<Block> freeBySize = new TreeSet<>(BY_SIZE);
    private long used;

    /**
     * Creates an allocator over {@code [0, capacity)}; capacity is rounded down to the alignment.
     *
     * @param capacity region size in bytes
     */
    FreeListAllocator(long capacity) {
        this.capacity = capacity - capacity % ALIGNMENT;
        if (this.capacity > 0) {
            addFree(0, this.capacity);
        }
    }

    /**
     * Returns the size a request of {@code size} bytes occupies.
     *
     * @param size requested bytes, at least 1
     * @return the aligned block size
     */
    static long blockSize(long size) {
        long unit = size >= PAGE_ALIGNED_MIN ? PAGE : ALIGNMENT;
        return (size + unit - 1) & -unit;
    }

    /**
     * Allocates a block of at least {@code size} bytes.
     *
     * @param size requested bytes, at least 1
     * @return the block's offset, or -1 if no free block is large enough
     */
    long allocate(long size) {
        long need = blockSize(size);
        if (size < PAGE_ALIGNED_MIN) {
            Block fit = freeBySize.ceiling(new Block(-1, need));
            if (fit == null) {
                return -1;
            }
            take(fit, fit.offset, need);
            return fit.offset;
        }
        // Best fit among the smallest blocks that hold a page-aligned start; a block of
        // need + PAGE - ALIGNMENT bytes always does, so the search is bounded.
        int probes = 0;
        for (Block b : freeBySize.tailSet(new Block(-1, need))) {
            long start = (b.offset + PAGE - 1) & -PAGE;
            if (start + need <= b.offset + b.size) {
                take(b, start, need);
                return start;
            }
            if (++probes == ALIGNED_FIT_PROBES) {
                break;
            }
        }
        Block roomy = freeBySize.ceiling(new Block(-1, need + PAGE - ALIGNMENT));
        if (roomy == null) {
            return -1;
        }
        long start = (roomy.offset + PAGE - 1) & -PAGE;
        take(roomy, start, need);
        return start;
    }

    /** Allocates {@code [start, start + need)} out of free block {@code b}; the rest stays free. */
    private void take(Block b, long start, long need) {
        removeFree(b);
        if (start > b.offset) {
            addFree(b.offset, start - b.offset);
        }
        long end = start + need;
        if (b.offset + b.size > end) {
            addFree(end, b.offset + b.size - end);
        }
        used += need;
    }

    /**
     * Gives up every free byte at or beyond {@code limit}: nothing there is handed out again,
     * and the capacity becomes {@code limit}. The store's memory folder could not give the
     * region more; nothing may be allocated beyond {@code limit} when this is called.
     */
    void retire(long limit) {
        for (Map.Entry<Long, Long> e : List.copyOf(freeByOffset.tailMap(
                Optional.ofNullable(freeByOffset.floorKey(limit)).orElse(0L)).entrySet())) {
            long offset = e.getKey();
            long end = offset + e.getValue();
            if (end <= limit) {
                continue;
            }
            removeFree(new Block(offset, e.getValue()));
            if (offset < limit) {
                addFree(offset, limit - offset);
            }
        }
        capacity = Math.min(capacity, limit);
    }

    /**
     * Frees a block returned by {@link #allocate} for the same {@code size}.
     *
     * @param offset the block's offset
     * @param size the size given to {@code allocate}
     */
    void free(long offset, long size) {
        long start = offset;
        long length = blockSize(size);
        used -= length;
        Map.Entry<Long, Long> before = freeByOffset.floorEntry(start);
        if (before != null) {
            if (before.getKey() + before.getValue() > start) {
                throw new IllegalStateException("double free of block at offset " + offset);
            }
            if (before.getKey() + before.getValue() == start) {
                removeFree(new Block(before.getKey(), before.getValue()));
                start = before.getKey();
                length += before.getValue();
            }
        }
        Long afterSize = freeByOffset.get(start + length);
        if (afterSize != null) {
            removeFree(new Block(start + length, afterSize));
            length += afterSize;
        }
        addFree(start, length);
    }

    /** Returns the bytes in allocated blocks. */
    long used() {
        return used;
    }

    /** Returns the usable capacity (the region size rounded down to the alignment). */
    long capacity() {
        return capacity;
    }

    /** Returns the size of the largest free block, 0 if none. */
    long largestFree() {
        return freeBySize.isEmpty() ? 0 : freeBySize.last().size;
    }

    /** Returns the number of free blocks (a fragmentation measure). */
    int freeBlocks() {
        return freeByOffset.size();
    }

    private void addFree(long offset, long size) {
        freeByOffset.put(offset, size);
        freeBySize.add(new Block(offset, size));
    }

    private void removeFree(Block block) {
        freeByOffset.remove(block.offset);
        freeBySize.remove(block);
    }
}
