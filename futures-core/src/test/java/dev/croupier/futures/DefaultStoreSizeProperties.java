package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The default store size: its rule, its caps, and a clear refusal on a machine too small. */
class DefaultStoreSizeProperties {

    private static final long GIB = 1L << 30;

    @Property(tries = 300)
    void neverMoreThanTheShareOfWhatIsAvailable(
            @ForAll @IntRange(min = 1, max = 64) int nodes,
            @ForAll @LongRange(min = 1L << 30, max = 1L << 42) long available,
            @ForAll @LongRange(min = -1, max = 1L << 42) long cgroupRoom) {
        DefaultStoreSize s;
        try {
            s = DefaultStoreSize.of(nodes, available, cgroupRoom);
        } catch (CroupierException tooSmall) {
            assertEquals(ErrorCode.BAD_INPUT, tooSmall.code());
            assertTrue(tooSmall.getMessage().contains("--store-memory"), tooSmall.getMessage());
            return;
        }
        long memory = cgroupRoom >= 0 ? Math.min(available, cgroupRoom) : available;
        assertTrue(s.bytesPerNode() * nodes <= memory * DefaultStoreSize.PERCENT / 100, s.reason());
        assertTrue(s.bytesPerNode() >= DefaultStoreSize.MIN_BYTES_PER_NODE);
        assertEquals(0, s.bytesPerNode() % (1 << 20), "whole MiB");
    }

    @Property(tries = 200)
    void moreMemoryNeverGivesLess(@ForAll @IntRange(min = 1, max = 16) int nodes,
                                  @ForAll @LongRange(min = 4L << 30, max = 1L << 40) long available,
                                  @ForAll @LongRange(min = 0, max = 1L << 40) long more) {
        long a = DefaultStoreSize.of(nodes, available, -1).bytesPerNode();
        long b = DefaultStoreSize.of(nodes, available + more, -1).bytesPerNode();
        assertTrue(b >= a);
    }

    @Test
    void thisMachineAndAContainerLimit() {
        DefaultStoreSize machine = DefaultStoreSize.of(4, 24 * GIB, -1);
        assertEquals((24 * GIB / 100 * 30) / 4 & -(1L << 20), machine.bytesPerNode());
        assertEquals("1.8 GiB per node: 30% of 24.0 GiB available / 4 nodes", machine.reason());
        DefaultStoreSize container = DefaultStoreSize.of(2, 24 * GIB, 4 * GIB);
        assertEquals((4 * GIB / 100 * 30) / 2 & -(1L << 20), container.bytesPerNode());
        assertTrue(container.reason().contains("cgroup limit"), container.reason());
        CroupierException tiny = assertThrows(CroupierException.class, () -> DefaultStoreSize.of(8, 512L << 20, -1));
        assertTrue(tiny.getMessage().contains("too small for 8 object stores") && tiny.getMessage().contains("--store-memory"),
                tiny.getMessage());
    }
}
