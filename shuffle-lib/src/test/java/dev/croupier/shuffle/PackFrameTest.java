package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Packs: parts read back as laid out; a pack whose header does not hold is refused, naming the field. */
class PackFrameTest {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Partitions of 3, 0, 5 and 2 bytes in 2 packs: pack 0 holds partitions 0 and 2, pack 1 partitions 1 and 3. */
    static List<MemorySegment> fourPartitionsInTwoPacks() {
        MemorySegment[] parts = new MemorySegment[4];
        List<MemorySegment> packs = PackFrame.allocate(new long[] {3, 0, 5, 2}, 2, parts);
        for (int p = 0; p < 4; p++) {
            parts[p].fill((byte) ('a' + p));
        }
        return packs;
    }

    static String text(MemorySegment segment) {
        return new String(segment.toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII);
    }

    @Test
    void partKIsPartitionGPlusKTimesPacks() {
        List<MemorySegment> packs = fourPartitionsInTwoPacks();
        assertEquals(2, packs.size());
        assertEquals(PackFrame.FIXED_BYTES + 2 * 8 + 8, packs.get(0).byteSize());
        assertEquals("aaa", text(PackFrame.part(packs.get(0), 0)));
        assertEquals("ccccc", text(PackFrame.part(packs.get(0), 1)));
        assertEquals("", text(PackFrame.part(packs.get(1), 0)));
        assertEquals("dd", text(PackFrame.part(packs.get(1), 1)));
    }

    @Test
    void withoutPacksEveryPartitionIsItsOwnBlock() {
        MemorySegment[] parts = new MemorySegment[3];
        List<MemorySegment> blocks = PackFrame.allocate(new long[] {4, 0, 1}, 0, parts);
        assertEquals(List.of(parts), blocks);
        assertEquals(4, blocks.get(0).byteSize());
        assertEquals(0, blocks.get(1).byteSize());
    }

    @Test
    void aBrokenHeaderIsNamedByFieldAndOffset() {
        MemorySegment pack = copy(fourPartitionsInTwoPacks().get(0));
        assertRefused("version at offset 0 is 9, not 1", withByte(pack, 0, 9), 0);
        assertRefused("parts at offset 4 is 0, for a pack of 32 bytes", withInt(pack, 4, 0), 0);
        assertRefused("parts at offset 4 is 1000, for a pack of 32 bytes", withInt(pack, 4, 1000), 0);
        assertRefused("part 2 was asked of a pack of 2 parts", pack, 2);
        assertRefused("end[1] at offset 16 is 900, not within [3, 8], the part's start and the parts' bytes", withLong(pack, 16, 900), 1);
        assertRefused("end[1] at offset 16 is 2, not within [3, 8], the part's start and the parts' bytes", withLong(pack, 16, 2), 1);
        assertRefused("the pack has 5 bytes, fewer than its 8-byte header", pack.asSlice(0, 5), 0);
    }

    private static void assertRefused(String message, MemorySegment pack, int k) {
        CroupierException e = assertThrows(CroupierException.class, () -> PackFrame.part(pack, k));
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertEquals("pack frame: " + message, e.getMessage());
    }

    private static MemorySegment copy(MemorySegment s) {
        return MemorySegment.ofArray(s.toArray(ValueLayout.JAVA_BYTE));
    }

    private static MemorySegment withByte(MemorySegment s, long at, int value) {
        MemorySegment c = copy(s);
        c.set(ValueLayout.JAVA_BYTE, at, (byte) value);
        return c;
    }

    private static MemorySegment withInt(MemorySegment s, long at, int value) {
        MemorySegment c = copy(s);
        c.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), at, value);
        return c;
    }

    private static MemorySegment withLong(MemorySegment s, long at, long value) {
        MemorySegment c = copy(s);
        c.set(LONG, at, value);
        return c;
    }
}
