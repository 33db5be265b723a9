package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.shuffle.PackFrame;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * The block {@link RandomShuffleJob} sends from mappers to reducers: runs of fixed-size
 * records, each tagged with the map task that made it, so a reducer can put its runs back in
 * input order whatever grouping or order the strategy delivered them in (merges, rounds,
 * best-effort fallbacks), and so permute the same sequence on every run of the job.
 *
 * <pre>
 *  block := run*                    (a merge concatenates blocks; runs stay whole)
 *
 *  run at byte offset o, little-endian:
 *  0         1                    4                  8                                16
 *  +---------+--------------------+------------------+--------------------------------+
 *  | version | reserved (0, 0, 0) | mapIndex  i32    | records  i64                   |
 *  | u8 = 1  |                    | map task (input) | records that follow, >= 1      |
 *  +---------+--------------------+------------------+--------------------------------+
 *  | records x recordBytes of record data, in the order of the map's input            |
 *  +----------------------------------------------------------------------------------+
 * </pre>
 *
 * A mapper writes at most one run per partition, so a partition holds at most one run per map
 * index. An empty partition is a zero-byte block (no run). Stateless and thread-safe.
 */
final class RunFrame {

    /** The layout version this class writes and reads. */
    static final byte VERSION = 1;
    /** Bytes of a run header. */
    static final int HEADER_BYTES = 16;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RunFrame() {}

    /**
     * The blocks of one map's partitions, partition p one run of {@code records[p]} records from
     * map {@code mapIndex} (zero bytes when 0), allocated as {@link PackFrame#allocate} does,
     * with {@code packs} packs or none; {@code runs[p]} is set to partition p's block, header
     * written, its records to be copied in from {@link #HEADER_BYTES} on. Returns what the map
     * task returns.
     */
    static List<MemorySegment> allocateRuns(int mapIndex, long[] records, int recordBytes, int packs,
                                            MemorySegment[] runs) {
        long[] bytes = new long[records.length];
        for (int p = 0; p < bytes.length; p++) {
            bytes[p] = records[p] == 0 ? 0 : HEADER_BYTES + records[p] * recordBytes;
        }
        List<MemorySegment> out = PackFrame.allocate(bytes, packs, runs);
        for (int p = 0; p < bytes.length; p++) {
            if (records[p] > 0) {
                runs[p].set(INT, 0, VERSION & 0xFF);
                runs[p].set(INT, 4, mapIndex);
                runs[p].set(LONG, 8, records[p]);
            }
        }
        return out;
    }

    /** The runs of {@code blocks} in input order (ascending map index), checked against the layout. */
    static Runs read(List<MemorySegment> blocks, int recordBytes, int partition) {
        int count = 0;
        for (MemorySegment b : blocks) {
            for (long o = 0; o < b.byteSize(); o += HEADER_BYTES + check(b, o, recordBytes, partition) * recordBytes) {
                count++;
            }
        }
        long[] keys = new long[count];
        long[] offsets = new long[count];
        int[] blockOfRun = new int[count];
        int i = 0;
        for (int bi = 0; bi < blocks.size(); bi++) {
            MemorySegment b = blocks.get(bi);
            for (long o = 0; o < b.byteSize(); o += HEADER_BYTES + b.get(LONG, o + 8) * recordBytes, i++) {
                // Map index above, run number below: sorting the keys sorts the runs by map.
                keys[i] = ((long) b.get(INT, o + 4) << 32) | i;
                offsets[i] = o;
                blockOfRun[i] = bi;
            }
        }
        Arrays.sort(keys);
        Runs runs = new Runs(count);
        for (int k = 0; k < count; k++) {
            int run = (int) keys[k];
            int map = (int) (keys[k] >>> 32);
            if (k > 0 && (int) (keys[k - 1] >>> 32) == map) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "partition " + partition + " got two runs of map "
                        + map + "; a map writes one run per partition");
            }
            MemorySegment b = blocks.get(blockOfRun[run]);
            runs.block[k] = blockOfRun[run];
            runs.dataOffset[k] = offsets[run] + HEADER_BYTES;
            runs.records[k] = b.get(LONG, offsets[run] + 8);
        }
        return runs;
    }

    /** Checks the run header at {@code o} and returns its record count. */
    private static long check(MemorySegment b, long o, int recordBytes, int partition) {
        if (b.byteSize() - o < HEADER_BYTES) {
            throw corrupt(partition, o, "a run header needs " + HEADER_BYTES + " bytes, " + (b.byteSize() - o) + " are left");
        }
        int word = b.get(INT, o);
        if (word != VERSION) {
            throw corrupt(partition, o, "version " + (word & 0xFF) + " with reserved bytes 0x"
                    + Integer.toHexString(word >>> 8) + ", expected version " + VERSION + " with reserved bytes 0");
        }
        if (b.get(INT, o + 4) < 0) {
            throw corrupt(partition, o, "field mapIndex = " + b.get(INT, o + 4) + " is negative");
        }
        long records = b.get(LONG, o + 8);
        long room = (b.byteSize() - o - HEADER_BYTES) / recordBytes;
        if (records < 1 || records > room) {
            throw corrupt(partition, o, "field records = " + records + " is outside 1.." + room
                    + " (the " + recordBytes + "-byte records that fit in the rest of the block)");
        }
        return records;
    }

    private static CroupierException corrupt(int partition, long offset, String what) {
        return new CroupierException(ErrorCode.BAD_INPUT, "partition " + partition + ": corrupt run block at byte offset "
                + offset + ": " + what);
    }

    /** Runs of a partition in input order: parallel arrays indexed by run, no object per record. Not thread-safe. */
    static final class Runs {
        /** Index of the block holding each run. */
        final int[] block;
        /** Byte offset of each run's first record in its block. */
        final long[] dataOffset;
        /** Records of each run. */
        final long[] records;

        Runs(int count) {
            block = new int[count];
            dataOffset = new long[count];
            records = new long[count];
        }

        int count() {
            return block.length;
        }

        long totalRecords() {
            long total = 0;
            for (long r : records) {
                total += r;
            }
            return total;
        }
    }
}
