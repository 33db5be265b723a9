package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.reshard.ReshardSpec;
import java.util.Arrays;

/**
 * Cuts ordered records into output shards; the one packing rule of both {@link LocalReshard}
 * and the distributed job. By size: records are added in order until the shard's content bytes
 * reach the target, then the shard is closed; a record is never split, so every shard but the
 * last holds at least the target and at most one record's bytes over it (its last record is
 * the one that reached the target). By count: every shard but the last holds exactly the
 * target number of records. This is dSort's rule for {@code output_format}. With an external
 * key map every template packs its own records, each with its own shard count.
 *
 * <p>Packing is a left-to-right scan, so it is written as a cursor that can stop anywhere and
 * resume from its {@link #carry() carried state}: the distributed job plans each sorted
 * partition in its own task, handing the state on, and a creation task replays the cursor to
 * find its records without any list of them ever being made.
 *
 * <p>Thread-safety: not thread-safe; one instance per scan.
 */
public final class ShardPacking {
    /** Result of {@link #place} for a record no key map entry takes. */
    public static final int DROPPED = -1;

    /** Bits of an {@link #outputId} that hold the shard index within its template. */
    private static final int INDEX_BITS = 40;

    private final KeyMap keyMap;
    private final long target;
    private final boolean byCount;
    private final long[] index;
    private final long[] fill;
    private long lastIndex;
    private int lastProblem;

    /**
     * @param keyMap the external key map, or {@code null} for one output template
     * @param target bytes (or records when {@code byCount}) per shard, &gt; 0
     * @param byCount whether {@code target} counts records
     * @param carry the state to start from ({@link #carry()} of the scan so far), or
     *     {@code null} to start at shard 0 of every template
     */
    public ShardPacking(KeyMap keyMap, long target, boolean byCount, long[] carry) {
        if (target <= 0) {
            throw new IllegalArgumentException("target must be > 0, got " + target);
        }
        this.keyMap = keyMap;
        this.target = target;
        this.byCount = byCount;
        int templates = templates(keyMap);
        this.index = new long[templates];
        this.fill = new long[templates];
        if (carry != null) {
            if (carry.length != 2 * templates) {
                throw new IllegalArgumentException("carry of " + carry.length + " longs for " + templates + " templates");
            }
            for (int t = 0; t < templates; t++) {
                index[t] = carry[2 * t];
                fill[t] = carry[2 * t + 1];
            }
        }
    }

    /**
     * A cursor at the start, packing as {@code spec} says.
     *
     * @param spec the job spec: {@code output_shard_records}, else {@code output_shard_size},
     *     else dSort's {@code ceil(total bytes / output_format names)}
     * @param keyMap the job's key map, or {@code null}
     * @param totalBytes content bytes of all extracted records (used only for the last rule)
     * @return the cursor
     */
    public static ShardPacking start(ReshardSpec spec, KeyMap keyMap, long totalBytes) {
        return new ShardPacking(keyMap, target(spec, totalBytes), byCount(spec), null);
    }

    /**
     * @param spec the job spec
     * @param totalBytes content bytes of all extracted records
     * @return what a shard is packed to: records if {@link #byCount}, else bytes; at least 1
     */
    public static long target(ReshardSpec spec, long totalBytes) {
        if (spec.outputShardRecords() > 0) {
            return spec.outputShardRecords();
        }
        if (spec.outputShardSize() > 0) {
            return spec.outputShardSize();
        }
        long names = spec.outputFormat().count();
        return Math.max(1, (totalBytes + names - 1) / names);
    }

    /** @param spec the job spec @return whether its shards are packed by record count */
    public static boolean byCount(ReshardSpec spec) {
        return spec.outputShardRecords() > 0;
    }

    /** @param keyMap a key map or {@code null} @return how many templates pack independently */
    public static int templates(KeyMap keyMap) {
        return keyMap == null ? 1 : keyMap.templates().size();
    }

    /**
     * @param template a template (0 without a key map)
     * @param index a shard index within it, below 2^40
     * @return one number naming the output shard, ordered by template then index
     */
    public static long outputId(int template, long index) {
        return (long) template << INDEX_BITS | index;
    }

    /** @param outputId as {@link #outputId} made it @return its template */
    public static int templateOf(long outputId) {
        return (int) (outputId >>> INDEX_BITS);
    }

    /** @param outputId as {@link #outputId} made it @return its index within the template */
    public static long indexOf(long outputId) {
        return outputId & ((1L << INDEX_BITS) - 1);
    }

    /**
     * Places the next record in order.
     *
     * @param m the record
     * @return its template, or {@link #DROPPED} (then {@link #lastProblem()} says why); the
     *     shard index is {@link #lastIndex()}
     */
    public int place(RecordMeta m) {
        int t = 0;
        if (keyMap != null) {
            t = keyMap.templateFor(m.key());
            if (t < 0) {
                lastProblem = t;
                return DROPPED;
            }
        }
        lastIndex = index[t];
        fill[t] += byCount ? 1 : m.size();
        if (fill[t] >= target) {
            index[t]++;
            fill[t] = 0;
        }
        return t;
    }

    /** @return the shard index (within its template) of the record last placed */
    public long lastIndex() {
        return lastIndex;
    }

    /** @return -1 when the last dropped record matched no key map entry, -2 when it matched several */
    public int lastProblem() {
        return lastProblem;
    }

    /** @return the state to resume from: per template, the open shard's index and fill */
    public long[] carry() {
        long[] c = new long[2 * index.length];
        for (int t = 0; t < index.length; t++) {
            c[2 * t] = index[t];
            c[2 * t + 1] = fill[t];
        }
        return c;
    }

    @Override
    public String toString() {
        return "ShardPacking" + Arrays.toString(carry());
    }
}
