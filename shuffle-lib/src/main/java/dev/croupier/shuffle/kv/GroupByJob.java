package dev.croupier.shuffle.kv;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.SegmentPackMapper;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import dev.croupier.shuffle.records.RecordJobBuilder;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Group-by with an aggregate over {@link KvBlock}s: every distinct key once, with the
 * {@link Aggregate}'s state of all its values.
 *
 * <pre>
 *   map i:     fold input i per key (a combiner), split the states by key hash   (R state blocks, or a pack per node)
 *   [merge]:   fold state blocks per key                                          (RIFFLE, MAGNET, PUSH_PIPELINED)
 *   reduce r:  fold every state block of partition r per key                     (one block: key, state)
 * </pre>
 *
 * Because the maps already aggregate, blocks carry one entry per distinct key of an input, not
 * one per value. With {@link Strategy#STREAMING}, each round folds into the reducers' running
 * states and {@link Builder#onRound} sees partial results (online aggregation): the final states
 * equal the batch answer. With {@link Builder#splitPartitionsAbove}, a batch partition too large
 * for one reducer is split by a second hash of the keys (its pieces are outputs with
 * {@code parts > 1}, each key in exactly one). Keys of a partition come out in the order they
 * were first met.
 * Immutable; {@link #run} may be called more than once.
 */
public final class GroupByJob {

    /** The checked settings, copied out of the builder so the job never changes. */
    private record Settings(List<ObjectRef<MemorySegment>> inputs, Aggregate aggregate, int partitions,
                            Strategy strategy, int mapsPerRound, ShuffleJob.RoundListener<MemorySegment> onRound,
                            long splitPartitionsAbove, String name,
                            Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment>> tuning) {}

    private final Settings b;

    private GroupByJob(Settings settings) {
        this.b = settings;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Submits the group-by; returns when every reduce task is submitted. */
    public ShuffleResult<MemorySegment> run(Cluster cluster) {
        Aggregate aggregate = b.aggregate;
        ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> job =
                ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                        .name(b.name)
                        .inputs(b.inputs)
                        .packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) -> combine(aggregate, in, r, packs))
                        .merger((int p, List<MemorySegment> blocks) -> fold(aggregate, blocks))
                        .partitions(b.partitions > 0 ? b.partitions : b.inputs.size())
                        .strategy(b.strategy);
        if (b.strategy == Strategy.STREAMING) {
            job.streamingReducer((int p, MemorySegment state, List<MemorySegment> blocks) -> {
                List<MemorySegment> all = new ArrayList<>(blocks.size() + 1);
                if (state != null) {
                    all.add(state);
                }
                all.addAll(blocks);
                return fold(aggregate, all);
            });
            if (b.mapsPerRound > 0) {
                job.mapsPerRound(b.mapsPerRound);
            }
            if (b.onRound != null) {
                job.onRound(b.onRound);
            }
        } else {
            job.reducer((int p, List<MemorySegment> blocks) -> fold(aggregate, blocks));
            if (b.splitPartitionsAbove > 0) {
                job.splitPartitionsAbove(b.splitPartitionsAbove, (int p, MemorySegment block, int ways) -> split(block, ways));
            }
        }
        b.tuning.accept(job);
        return job.build().run(cluster);
    }

    /** A map task: aggregates its input per key, then splits the states by partition (into {@code packs} packs, or 0). */
    static List<MemorySegment> combine(Aggregate aggregate, MemorySegment input, int partitions, int packs) {
        try (KeyTable table = new KeyTable(aggregate)) {
            KvBlock.Cursor c = new KvBlock.Cursor(input);
            while (c.next()) {
                table.add(input, c.keyOffset(), c.keyLength(), c.valueOffset(), c.valueLength());
            }
            return table.toBlocks(partitions, packs);
        }
    }

    /** A merge or reduce task: folds state blocks per key into one state block. */
    static MemorySegment fold(Aggregate aggregate, List<MemorySegment> blocks) {
        try (KeyTable table = new KeyTable(aggregate)) {
            table.mergeAll(blocks);
            return table.toBlocks(1, 0).getFirst();
        }
    }

    /**
     * Skew: splits a state block into {@code ways} by a second hash of each key (the hash's low
     * half; partitions use its high half), so a key's states all go to one sub-reducer and the
     * sub-reducers' outputs together hold each key once.
     */
    static List<MemorySegment> split(MemorySegment block, int ways) {
        int[] entries = new int[ways];
        long[] bytes = new long[ways];
        KvBlock.Cursor c = new KvBlock.Cursor(block);
        while (c.next()) {
            int k = subPartitionOf(KeyTable.hash(block, c.keyOffset(), c.keyLength()), ways);
            entries[k]++;
            bytes[k] += KvBlock.entryBytes(c.keyLength(), c.valueLength());
        }
        KvBlock.Builder[] out = new KvBlock.Builder[ways];
        for (int k = 0; k < ways; k++) {
            out[k] = new KvBlock.Builder(entries[k], bytes[k]);
        }
        c = new KvBlock.Cursor(block);
        while (c.next()) {
            int k = subPartitionOf(KeyTable.hash(block, c.keyOffset(), c.keyLength()), ways);
            out[k].add(block, c.keyOffset(), c.keyLength(), block, c.valueOffset(), c.valueLength());
        }
        List<MemorySegment> pieces = new ArrayList<>(ways);
        for (KvBlock.Builder builder : out) {
            pieces.add(builder.build());
        }
        return pieces;
    }

    private static int subPartitionOf(long hash, int ways) {
        return (int) (((hash & 0xFFFF_FFFFL) * ways) >>> 32);
    }

    /** Settings of a group-by, checked by {@link #build()}. Not thread-safe. */
    public static final class Builder extends RecordJobBuilder<Builder> {
        private Aggregate aggregate;
        private int mapsPerRound;
        private ShuffleJob.RoundListener<MemorySegment> onRound;
        private long splitPartitionsAbove;
        private Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment>> tuning = job -> {};

        private Builder() {
            super("GroupByJob", "group-by");
        }

        /** What to compute per key (required), e.g. {@link Aggregate#LONG_SUM}. */
        public Builder aggregate(Aggregate aggregate) {
            this.aggregate = aggregate;
            return this;
        }

        /** STREAMING: map tasks per round (default: the shuffle's). */
        public Builder mapsPerRound(int maps) {
            this.mapsPerRound = maps;
            return this;
        }

        /** STREAMING: told every reducer's state block after each round, on the driver. */
        public Builder onRound(ShuffleJob.RoundListener<MemorySegment> listener) {
            this.onRound = listener;
            return this;
        }

        /**
         * Skew (batch strategies): a partition whose state blocks total more than {@code bytes}
         * is split by a second key hash and reduced by several tasks (0, the default: never).
         */
        public Builder splitPartitionsAbove(long bytes) {
            this.splitPartitionsAbove = bytes;
            return this;
        }

        /** Further settings of the underlying shuffle (rounds, merge factor, speculation...). */
        public Builder tuning(Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment>> tuning) {
            this.tuning = Objects.requireNonNull(tuning, "tuning");
            return this;
        }

        public GroupByJob build() {
            if (inputs == null || inputs.isEmpty()) {
                throw bad("inputs", inputs == null ? "unset" : "empty", "at least one key/value block");
            }
            if (aggregate == null) {
                throw bad("aggregate", null, "an Aggregate");
            }
            if (aggregate.stateBytes() < 1 || aggregate.stateBytes() > 1 << 20) {
                throw bad("aggregate", "stateBytes() = " + aggregate.stateBytes(), "1..1048576 bytes of state");
            }
            checkPartitions();
            if (mapsPerRound < 0) {
                throw bad("mapsPerRound", mapsPerRound, ">= 1");
            }
            if (onRound != null && strategy != Strategy.STREAMING) {
                throw bad("onRound", "a listener", "strategy STREAMING (other strategies have no rounds of partial results)");
            }
            if (splitPartitionsAbove < 0) {
                throw bad("splitPartitionsAbove", splitPartitionsAbove, ">= 1 byte, or 0 for no splitting");
            }
            if (splitPartitionsAbove > 0 && strategy == Strategy.STREAMING) {
                throw bad("splitPartitionsAbove", splitPartitionsAbove, "a batch strategy (STREAMING keeps one state per reducer)");
            }
            return new GroupByJob(new Settings(inputs, aggregate, partitions, strategy, mapsPerRound, onRound,
                    splitPartitionsAbove, name, tuning));
        }
    }
}
