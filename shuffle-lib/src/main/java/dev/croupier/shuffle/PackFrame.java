package dev.croupier.shuffle;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.TaskOutput;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A pack of {@code MemorySegment} blocks: the blocks of several partitions that one map task
 * sends to one merging node, as one object ({@link PackedMapper}, {@link SegmentPackMapper}).
 * A map writes its partitions straight into their parts ({@link #allocate}), and a merge reads
 * a part back as a view ({@link #part}), so packing copies nothing.
 *
 * <pre>
 *  little-endian:
 *  0         1                    4                  8
 *  +---------+--------------------+------------------+
 *  | version | reserved (0, 0, 0) | parts  i32       |
 *  | u8 = 1  |                    | >= 1             |
 *  +---------+--------------------+------------------+
 *  | end[0] i64 | end[1] i64 | ... | end[parts - 1] |   where part k ends, in bytes from the
 *  +-------------------------------------------------+   first part's start; ascending
 *  | part 0 | part 1 | ... | part parts - 1          |   each the block its partition would be
 *  +-------------------------------------------------+   on its own (an empty part: no bytes)
 * </pre>
 *
 * Pack {@code g} of {@code packs} holds partitions {@code g, g + packs, ...}, so part {@code k}
 * is partition {@code g + k * packs}. Stateless and thread-safe.
 */
public final class PackFrame {

    /** The layout version this class writes and reads. */
    public static final byte VERSION = 1;
    /** Bytes before the table of ends. */
    public static final int FIXED_BYTES = 8;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private PackFrame() {}

    /**
     * Allocates the blocks of partitions of {@code partBytes[p]} bytes each as {@link TaskOutput}
     * memory and returns what a map task returns: with {@code packs} 0, one allocation per
     * partition; else {@code packs} packs with their headers written. Either way
     * {@code parts[p]} is set to partition p's block (in a pack, a view of it) for the caller
     * to fill.
     *
     * @throws IllegalArgumentException if {@code packs} is negative or above the partitions
     */
    public static List<MemorySegment> allocate(long[] partBytes, int packs, MemorySegment[] parts) {
        int partitions = partBytes.length;
        if (packs < 0 || packs > partitions) {
            throw new IllegalArgumentException("packs = " + packs + " must be in [0, " + partitions + "]");
        }
        if (packs == 0) {
            for (int p = 0; p < partitions; p++) {
                parts[p] = TaskOutput.allocate(partBytes[p]);
            }
            return List.of(parts);
        }
        List<MemorySegment> out = new ArrayList<>(packs);
        for (int g = 0; g < packs; g++) {
            int count = partsOf(g, packs, partitions);
            long data = headerBytes(count);
            long total = data;
            for (int p = g; p < partitions; p += packs) {
                total += partBytes[p];
            }
            MemorySegment pack = TaskOutput.allocate(total);
            pack.set(INT, 0, VERSION & 0xFF);
            pack.set(INT, 4, count);
            long end = 0;
            for (int k = 0, p = g; p < partitions; k++, p += packs) {
                parts[p] = pack.asSlice(data + end, partBytes[p]);
                end += partBytes[p];
                pack.set(LONG, FIXED_BYTES + 8L * k, end);
            }
            out.add(pack);
        }
        return out;
    }

    /** How many partitions below {@code partitions} pack {@code g} of {@code packs} holds. */
    private static int partsOf(int g, int packs, int partitions) {
        return g < partitions ? (partitions - g + packs - 1) / packs : 0;
    }

    private static long headerBytes(int parts) {
        return FIXED_BYTES + 8L * parts;
    }

    /**
     * Part {@code k} of {@code pack}, as a view.
     *
     * @throws CroupierException ({@link ErrorCode#BAD_INPUT}) if the header does not hold,
     *     naming the field and its offset
     */
    public static MemorySegment part(MemorySegment pack, int k) {
        if (pack.byteSize() < FIXED_BYTES) {
            throw bad("the pack has " + pack.byteSize() + " bytes, fewer than its " + FIXED_BYTES + "-byte header");
        }
        int version = pack.get(ValueLayout.JAVA_BYTE, 0);
        if (version != VERSION) {
            throw bad("version at offset 0 is " + version + ", not " + VERSION);
        }
        int count = pack.get(INT, 4);
        long data = headerBytes(Math.max(0, count));
        if (count < 1 || data > pack.byteSize()) {
            throw bad("parts at offset 4 is " + count + ", for a pack of " + pack.byteSize() + " bytes");
        }
        if (k < 0 || k >= count) {
            throw bad("part " + k + " was asked of a pack of " + count + " parts");
        }
        long start = k == 0 ? 0 : pack.get(LONG, FIXED_BYTES + 8L * (k - 1));
        long end = pack.get(LONG, FIXED_BYTES + 8L * k);
        if (start < 0 || end < start || end > pack.byteSize() - data) {
            throw bad("end[" + k + "] at offset " + (FIXED_BYTES + 8L * k) + " is " + end + ", not within ["
                    + start + ", " + (pack.byteSize() - data) + "], the part's start and the parts' bytes");
        }
        return pack.asSlice(data + start, end - start);
    }

    private static CroupierException bad(String what) {
        return new CroupierException(ErrorCode.BAD_INPUT, "pack frame: " + what);
    }
}
