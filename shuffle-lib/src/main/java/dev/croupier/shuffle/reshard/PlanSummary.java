package dev.croupier.shuffle.reshard;

import java.util.ArrayList;
import java.util.List;

/**
 * Design note: what the planning task of one sorted partition tells the next one and the
 * driver: the packing state carried in and out, and, for each output shard the partition
 * contributes to, how many records and bytes and which input shards they come from, in a
 * {@link TaskFrame}. Its size
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
        TaskFrame.Writer w = new TaskFrame.Writer().putInt(carryIn.length / 2);
        for (long v : carryIn) {
            w.putLong(v);
        }
        for (long v : carryOut) {
            w.putLong(v);
        }
        w.putInt(pieces.size());
        for (Piece p : pieces) {
            w.putInt(p.template()).putLong(p.index()).putLong(p.records()).putLong(p.bytes()).putInt(p.shards().length);
            for (int shard : p.shards()) {
                w.putInt(shard);
            }
        }
        w.putInt(warnings.size());
        for (String line : warnings) {
            w.putString(line);
        }
        return w.toBytes();
    }

    static PlanSummary decode(byte[] frame) {
        TaskFrame.Reader r = new TaskFrame.Reader(frame, "plan summary");
        int templates = r.getInt();
        long[] in = new long[2 * templates];
        long[] out = new long[2 * templates];
        for (int i = 0; i < in.length; i++) {
            in[i] = r.getLong();
        }
        for (int i = 0; i < out.length; i++) {
            out[i] = r.getLong();
        }
        int k = r.getInt();
        List<Piece> pieces = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            int t = r.getInt();
            long index = r.getLong();
            long records = r.getLong();
            long bytes = r.getLong();
            int[] shards = new int[r.getInt()];
            for (int j = 0; j < shards.length; j++) {
                shards[j] = r.getInt();
            }
            pieces.add(new Piece(t, index, records, bytes, shards));
        }
        int w = r.getInt();
        List<String> warnings = new ArrayList<>(w);
        for (int i = 0; i < w; i++) {
            warnings.add(r.getString());
        }
        return new PlanSummary(in, out, pieces, warnings);
    }
}
