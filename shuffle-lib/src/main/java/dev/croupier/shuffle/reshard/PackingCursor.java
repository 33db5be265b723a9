package dev.croupier.shuffle.reshard;

import java.util.Arrays;

import dev.croupier.formats.reshard.KeyMap;
import dev.croupier.formats.reshard.RecordMeta;
import dev.croupier.formats.reshard.ShardPacking;

/**
 * Design note: {@link ShardPacking}'s rule as a cursor that can stop at the end of one sorted
 * partition and resume at the start of the next from its carried state. Packing is a
 * left-to-right scan (a shard closes when its content reaches the target), so the sorted
 * partitions are planned by a chain of small tasks, each handing its state to the next; no
 * task sees more than one partition. A creation task replays the cursor over the partitions
 * its shard spans, from the state carried into each, to find its records again without the
 * driver ever listing records. With an external key map, every template has its own state.
 *
 * <p>Thread-safety: not thread-safe; one cursor per scan.
 */
final class PackingCursor {
    /** Result of {@link #place} for a record no key map entry takes. */
    static final int DROPPED = -1;

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
     * @param carry the state to start from ({@link #carry()} of the previous partition), or
     *     {@code null} to start at shard 0 of every template
     */
    PackingCursor(KeyMap keyMap, long target, boolean byCount, long[] carry) {
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

    static int templates(KeyMap keyMap) {
        return keyMap == null ? 1 : keyMap.templates().size();
    }

    /**
     * Places the next record in sorted order.
     *
     * @param m the record
     * @return its template, or {@link #DROPPED} (then {@link #lastProblem()} says why: -1 no
     *     entry, -2 several entries); the shard index is {@link #lastIndex()}
     */
    int place(RecordMeta m) {
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
    long lastIndex() {
        return lastIndex;
    }

    /** @return -1 when the last dropped record matched no key map entry, -2 when it matched several */
    int lastProblem() {
        return lastProblem;
    }

    /** @return the state to resume from: per template, the open shard's index and fill */
    long[] carry() {
        long[] c = new long[2 * index.length];
        for (int t = 0; t < index.length; t++) {
            c[2 * t] = index[t];
            c[2 * t + 1] = fill[t];
        }
        return c;
    }

    @Override
    public String toString() {
        return "PackingCursor" + Arrays.toString(carry());
    }
}
