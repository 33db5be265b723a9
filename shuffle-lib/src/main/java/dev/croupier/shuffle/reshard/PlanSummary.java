package dev.croupier.shuffle.reshard;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Design note: what the planning task of one sorted partition tells the next one and the
 * driver: the packing state carried in and out, and, for each output shard the partition
 * contributes to, how many records and bytes and which input shards they come from. Its size
 * grows with output shards and warnings, not with records, so the driver can hold every
 * partition's summary.
 *
 * <pre>
 *   0       4             8
 *   +-------+-------------+-------------------------------------------+
 *   | ver=1 | templates T | carryIn: T x (long index | long fill)      |
 *   +-------+-------------+ carryOut: T x (long index | long fill)     |
 *                         | int k | k x piece:                         |
 *                         |   int template | long index | long records |
 *                         |   long bytes | int s | int[s] input shards |
 *                         | int w | w x (int len | warning UTF-8)      |
 *                         +-------------------------------------------+
 * </pre>
 *
 * <p>Thread-safety: immutable.
 *
 * @param carryIn packing state at the partition's start
 * @param carryOut packing state at its end
 * @param pieces the output shards the partition contributes to, in order
 * @param warnings dropped records (external key map), one line each
 */
record PlanSummary(long[] carryIn, long[] carryOut, List<Piece> pieces, List<String> warnings) {
    /** Frame version written in the first int. */
    static final int VERSION = 1;

    /**
     * The records of one output shard within one partition.
     *
     * @param template its template (0 without a key map)
     * @param index its index within the template
     * @param records how many records
     * @param bytes their content bytes
     * @param shards the input shards they come from, ascending
     */
    record Piece(int template, long index, long records, long bytes, int[] shards) {
    }

    byte[] encode() {
        List<byte[]> lines = new ArrayList<>();
        int size = 8 + 16 * carryIn.length + 4 + 4;
        for (Piece p : pieces) {
            size += 4 + 8 + 8 + 8 + 4 + 4 * p.shards().length;
        }
        for (String w : warnings) {
            byte[] b = w.getBytes(StandardCharsets.UTF_8);
            lines.add(b);
            size += 4 + b.length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putInt(carryIn.length / 2);
        for (long v : carryIn) {
            b.putLong(v);
        }
        for (long v : carryOut) {
            b.putLong(v);
        }
        b.putInt(pieces.size());
        for (Piece p : pieces) {
            b.putInt(p.template()).putLong(p.index()).putLong(p.records()).putLong(p.bytes()).putInt(p.shards().length);
            for (int s : p.shards()) {
                b.putInt(s);
            }
        }
        b.putInt(lines.size());
        for (byte[] l : lines) {
            b.putInt(l.length).put(l);
        }
        return b.array();
    }

    static PlanSummary decode(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        int version = b.getInt();
        if (version != VERSION) {
            throw new IllegalStateException("plan summary version " + version + ", expected " + VERSION);
        }
        int templates = b.getInt();
        long[] in = new long[2 * templates];
        long[] out = new long[2 * templates];
        for (int i = 0; i < in.length; i++) {
            in[i] = b.getLong();
        }
        for (int i = 0; i < out.length; i++) {
            out[i] = b.getLong();
        }
        int k = b.getInt();
        List<Piece> pieces = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            int t = b.getInt();
            long index = b.getLong();
            long records = b.getLong();
            long bytes = b.getLong();
            int[] shards = new int[b.getInt()];
            for (int s = 0; s < shards.length; s++) {
                shards[s] = b.getInt();
            }
            pieces.add(new Piece(t, index, records, bytes, shards));
        }
        int w = b.getInt();
        List<String> warnings = new ArrayList<>(w);
        for (int i = 0; i < w; i++) {
            int len = b.getInt();
            warnings.add(new String(frame, b.position(), len, StandardCharsets.UTF_8));
            b.position(b.position() + len);
        }
        return new PlanSummary(in, out, pieces, warnings);
    }
}
