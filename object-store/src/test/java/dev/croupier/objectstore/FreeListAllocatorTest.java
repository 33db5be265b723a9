package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class FreeListAllocatorTest {

    /**
     * Random allocate/free, small and page-aligned sizes mixed: blocks never overlap, stay in
     * bounds, large ones start on a page, and all frees coalesce back.
     */
    @Property(tries = 200)
    void blocksNeverOverlapAndFreeingEverythingCoalesces(
            @ForAll @Size(max = 200) List<@IntRange(min = 1, max = 5000) Integer> sizes,
            @ForAll @Size(max = 200) List<@IntRange(min = 0, max = 3) Integer> frees,
            @ForAll @Size(max = 200) List<@IntRange(min = 0, max = 7) Integer> large) {
        FreeListAllocator allocator = new FreeListAllocator(2 * 1024 * 1024 + 192);
        TreeMap<Long, Long> taken = new TreeMap<>();
        List<long[]> order = new ArrayList<>();
        for (int i = 0; i < sizes.size(); i++) {
            long size = sizes.get(i);
            if (i < large.size() && large.get(i) == 0) {
                size += FreeListAllocator.PAGE_ALIGNED_MIN + 100L * sizes.get(i);
            }
            long offset = allocator.allocate(size);
            if (offset >= 0) {
                long block = FreeListAllocator.blockSize(size);
                assertEquals(0, offset % FreeListAllocator.ALIGNMENT);
                if (size >= FreeListAllocator.PAGE_ALIGNED_MIN) {
                    assertEquals(0, offset % FreeListAllocator.PAGE, "large block at " + offset);
                    assertEquals(0, block % FreeListAllocator.PAGE);
                }
                assertTrue(offset + block <= allocator.capacity());
                var before = taken.floorEntry(offset);
                assertTrue(before == null || before.getKey() + before.getValue() <= offset);
                var after = taken.ceilingEntry(offset);
                assertTrue(after == null || offset + block <= after.getKey());
                taken.put(offset, block);
                order.add(new long[] {offset, size});
            }
            if (i < frees.size() && frees.get(i) == 0 && !order.isEmpty()) {
                long[] victim = order.remove(order.size() / 2);
                allocator.free(victim[0], victim[1]);
                taken.remove(victim[0]);
            }
            assertEquals(taken.values().stream().mapToLong(Long::longValue).sum(), allocator.used());
        }
        for (long[] block : order) {
            allocator.free(block[0], block[1]);
        }
        assertEquals(0, allocator.used());
        assertEquals(1, allocator.freeBlocks());
        assertEquals(allocator.capacity(), allocator.largestFree());
    }

    @Test
    void bestFitPicksTheSmallestHoleThatFits() {
        FreeListAllocator allocator = new FreeListAllocator(1024);
        long a = allocator.allocate(256);
        long b = allocator.allocate(64);
        long c = allocator.allocate(128);
        allocator.allocate(64);
        allocator.free(a, 256);
        allocator.free(c, 128);
        assertEquals(c, allocator.allocate(100));
        assertEquals(a, allocator.allocate(200));
        assertTrue(b >= 0);
    }

    @Test
    void aPageAlignedBlockIsCutFromAnUnalignedHoleAndItsFrontStaysFree() {
        FreeListAllocator allocator = new FreeListAllocator(1 << 20);
        long small = allocator.allocate(100);
        long large = allocator.allocate(FreeListAllocator.PAGE_ALIGNED_MIN + 1);
        assertEquals(0, small);
        assertEquals(FreeListAllocator.PAGE, large);
        assertEquals(FreeListAllocator.PAGE_ALIGNED_MIN + FreeListAllocator.PAGE + 128, allocator.used());
        assertEquals(128, allocator.allocate(FreeListAllocator.PAGE - 128 - 64), "the front of the hole is reused");
        allocator.free(large, FreeListAllocator.PAGE_ALIGNED_MIN + 1);
        allocator.free(small, 100);
        allocator.free(128, FreeListAllocator.PAGE - 128 - 64);
        assertEquals(1, allocator.freeBlocks());
    }
}
