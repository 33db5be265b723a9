package dev.croupier.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import java.io.Serializable;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A shuffle: M inputs are mapped into R partitions each, blocks travel to reducers by a
 * {@link Strategy}, and R reducers make the outputs. Built with {@link #builder()}, run with
 * {@link #run(Cluster)} on any cluster. The higher-level jobs
 * ({@link dev.croupier.shuffle.records.SortJob}, {@link dev.croupier.shuffle.records.RandomShuffleJob},
 * {@link dev.croupier.shuffle.records.RepartitionJob}, {@link dev.croupier.shuffle.kv.GroupByJob})
 * are shuffles with particular functions.
 *
 * <p>Immutable; {@code run} may be called more than once (each run is independent).
 */
public final class ShuffleJob<I, B, O> {

    /** Produces map input {@code mapIndex} inside the map task (for inputs that are generated or read there). */
    @FunctionalInterface
    public interface Source<I> extends Serializable {
        I read(int mapIndex) throws Exception;
    }

    /** Told, on the driver, the reducers' states after each round of a {@link Strategy#STREAMING} shuffle. */
    @FunctionalInterface
    public interface RoundListener<O> {
        void onRound(int round, int rounds, List<O> states);
    }

    final Plan<I, B, O> plan;

    private ShuffleJob(Plan<I, B, O> plan) {
        this.plan = plan;
    }

    public static <I, B, O> Builder<I, B, O> builder() {
        return new Builder<>();
    }

    /**
     * Runs the shuffle. Returns once every reduce task is submitted (the driver waits earlier
     * only where the strategy needs it: rounds, speculation, best-effort merge, skew sizes, and
     * the maps' block sizes for a {@link PositionedReducer}).
     */
    public ShuffleResult<O> run(Cluster cluster) {
        return new ShuffleRun<>(cluster, plan).run();
    }

    /** The checked settings of a job. */
    record Plan<I, B, O>(
            String name,
            List<ObjectRef<I>> inputs,
            Source<I> source,
            int mappers,
            IndexedMapper<I, B> mapper,
            Merger<B> merger,
            PositionedReducer<B, O> reducer,
            BlockSize<B> blockSize,
            StreamingReducer<B, O> streamingReducer,
            Splitter<B> splitter,
            int partitions,
            Strategy strategy,
            int mergeFactor,
            long mergeTargetBytes,
            int mapsPerRound,
            long inputBytes,
            /* -1 when not given */
            long outputBytes,
            Duration speculateAfter,
            Duration bestEffortMergeTimeout,
            long splitPartitionsAbove,
            RoundListener<O> roundListener) {}

    /** Settings of a shuffle, checked by {@link #build()}. Not thread-safe. */
    public static final class Builder<I, B, O> {
        /** Default pre-shuffle merge factor of {@link Strategy#RIFFLE}. */
        public static final int DEFAULT_MERGE_FACTOR = 4;

        private String name = "shuffle";
        private List<ObjectRef<I>> inputs;
        private Source<I> source;
        private int sourceMappers;
        private IndexedMapper<I, B> mapper;
        private Merger<B> merger;
        private PositionedReducer<B, O> reducer;
        private BlockSize<B> blockSize;
        private StreamingReducer<B, O> streamingReducer;
        private Splitter<B> splitter;
        private int partitions;
        private Strategy strategy = Strategy.AUTO;
        private int mergeFactor = DEFAULT_MERGE_FACTOR;
        private long mergeTargetBytes;
        private int mapsPerRound;
        private long inputBytes;
        /** Null: not given, counted as the input's size. */
        private Long outputBytes;
        private Duration speculateAfter;
        private Duration bestEffortMergeTimeout;
        private long splitPartitionsAbove;
        private RoundListener<O> roundListener;

        private Builder() {}

        /** Prefix of the task names (stats show {@code name-map}, {@code name-merge}, {@code name-reduce}). */
        public Builder<I, B, O> name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The map inputs, one map task each. */
        public Builder<I, B, O> inputs(List<? extends ObjectRef<I>> inputs) {
            this.inputs = List.copyOf(inputs);
            return this;
        }

        /** {@code mappers} map tasks, task {@code i} reading its input with {@code source.read(i)}. */
        public Builder<I, B, O> source(int mappers, Source<I> source) {
            this.sourceMappers = mappers;
            this.source = Objects.requireNonNull(source, "source");
            return this;
        }

        public Builder<I, B, O> mapper(Mapper<I, B> mapper) {
            this.mapper = mapper == null ? null : (i, input, partitions) -> mapper.map(input, partitions);
            return this;
        }

        /**
         * Like {@link #mapper(Mapper)}, for a mapper that needs to know which input it maps. A
         * {@link PackedMapper} given here packs as with {@link #packedMapper}.
         */
        public Builder<I, B, O> indexedMapper(IndexedMapper<I, B> mapper) {
            this.mapper = mapper;
            return this;
        }

        /**
         * A mapper that can pack the blocks of several partitions into one: MAGNET and
         * PUSH_PIPELINED then take one block per merging node from each map task (the paper's
         * push*), and RIFFLE one per map task, not one per partition.
         */
        public Builder<I, B, O> packedMapper(PackedMapper<I, B> mapper) {
            this.mapper = mapper;
            return this;
        }

        /** Needed by RIFFLE, MAGNET and PUSH_PIPELINED (and by AUTO to choose them). */
        public Builder<I, B, O> merger(Merger<B> merger) {
            this.merger = merger;
            return this;
        }

        public Builder<I, B, O> reducer(Reducer<B, O> reducer) {
            this.reducer = reducer == null ? null : (partition, position, blocks) -> reducer.reduce(partition, blocks);
            this.blockSize = null;
            return this;
        }

        /**
         * A reducer told its partition's position in the output (see {@link PositionedReducer}):
         * every map task also reports its blocks' sizes by {@code blockSize}, and the driver waits
         * for all of them before it submits the reducers, which could not start earlier anyway.
         * Not with {@link Strategy#STREAMING} or {@link #splitPartitionsAbove}.
         */
        public Builder<I, B, O> positionedReducer(BlockSize<B> blockSize, PositionedReducer<B, O> reducer) {
            this.blockSize = Objects.requireNonNull(blockSize, "blockSize");
            this.reducer = Objects.requireNonNull(reducer, "reducer");
            return this;
        }

        /** The reducer of {@link Strategy#STREAMING}. */
        public Builder<I, B, O> streamingReducer(StreamingReducer<B, O> reducer) {
            this.streamingReducer = reducer;
            return this;
        }

        /** Number of reducers R. */
        public Builder<I, B, O> partitions(int partitions) {
            this.partitions = partitions;
            return this;
        }

        public Builder<I, B, O> strategy(Strategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /** RIFFLE: merge this many map outputs of one node at a time (default {@value #DEFAULT_MERGE_FACTOR}). */
        public Builder<I, B, O> mergeFactor(int factor) {
            this.mergeFactor = factor;
            return this;
        }

        /** RIFFLE: instead of a fixed factor, merge until merged blocks reach about this many bytes. */
        public Builder<I, B, O> mergeTargetBytes(long bytes) {
            this.mergeTargetBytes = bytes;
            return this;
        }

        /** MAGNET, PUSH_PIPELINED, STREAMING: map tasks per round (default: two per live node). */
        public Builder<I, B, O> mapsPerRound(int maps) {
            this.mapsPerRound = maps;
            return this;
        }

        /** Total input bytes, when known: guides AUTO and RIFFLE's merge target. */
        public Builder<I, B, O> inputBytes(long bytes) {
            this.inputBytes = bytes;
            return this;
        }

        /**
         * Total bytes the reducers' outputs keep in the stores, when known: 0 for reducers that
         * write their outputs elsewhere (a file) and return a count. Guides AUTO, which otherwise
         * counts them as large as the input.
         */
        public Builder<I, B, O> outputBytes(long bytes) {
            this.outputBytes = bytes;
            return this;
        }

        /**
         * Speculation: once three quarters of the map tasks are done, a map task still running
         * {@code after} since the phase began gets a duplicate; the first to finish wins and
         * the other is cancelled. Off by default.
         */
        public Builder<I, B, O> speculateAfter(Duration after) {
            this.speculateAfter = after;
            return this;
        }

        /**
         * Best-effort merge: a merge task not done {@code timeout} after its round was submitted
         * is cancelled and its inputs go to the reducers unmerged. Off by default.
         */
        public Builder<I, B, O> bestEffortMerge(Duration timeout) {
            this.bestEffortMergeTimeout = timeout;
            return this;
        }

        /**
         * Skew: a partition whose blocks total more than {@code bytes} is split with the
         * {@link Splitter} into enough sub-partitions to fit, each reduced by its own task.
         * Not with {@link Strategy#STREAMING}.
         */
        public Builder<I, B, O> splitPartitionsAbove(long bytes, Splitter<B> splitter) {
            this.splitPartitionsAbove = bytes;
            this.splitter = splitter;
            return this;
        }

        /** STREAMING: told the reducers' states after every round. */
        public Builder<I, B, O> onRound(RoundListener<O> listener) {
            this.roundListener = listener;
            return this;
        }

        public ShuffleJob<I, B, O> build() {
            if ((inputs == null) == (source == null)) {
                throw bad("inputs/source", inputs == null ? "neither" : "both", "exactly one of inputs(...) or source(...)");
            }
            int mappers = inputs != null ? inputs.size() : sourceMappers;
            check(mappers >= 1 && mappers <= 10_000_000, "mappers", mappers, "1..10000000");
            check(partitions >= 1 && partitions <= 1_000_000, "partitions", partitions, "1..1000000");
            if (mapper == null) {
                throw bad("mapper", null, "a Mapper");
            }
            if (strategy == Strategy.STREAMING) {
                if (streamingReducer == null) {
                    throw bad("streamingReducer", null, "a StreamingReducer for Strategy.STREAMING");
                }
                if (blockSize != null) {
                    throw bad("positionedReducer", "set", "a strategy other than STREAMING (rounds have no final positions)");
                }
                if (splitPartitionsAbove > 0) {
                    throw bad("splitPartitionsAbove", splitPartitionsAbove,
                            "0 with Strategy.STREAMING (a reducer's running state is one task per round)");
                }
            } else if (reducer == null) {
                throw bad("reducer", null, "a Reducer (or Strategy.STREAMING with a streamingReducer)");
            }
            if ((strategy == Strategy.RIFFLE || strategy == Strategy.MAGNET || strategy == Strategy.PUSH_PIPELINED)
                    && merger == null) {
                throw bad("merger", null, "a Merger for Strategy." + strategy);
            }
            check(mergeFactor >= 2 && mergeFactor <= 1 << 16, "mergeFactor", mergeFactor, "2..65536");
            check(mergeTargetBytes >= 0, "mergeTargetBytes", mergeTargetBytes, ">= 0");
            check(mapsPerRound >= 0 && mapsPerRound <= 1 << 20, "mapsPerRound", mapsPerRound, "1..1048576");
            check(inputBytes >= 0, "inputBytes", inputBytes, ">= 0");
            check(outputBytes == null || outputBytes >= 0, "outputBytes", outputBytes, ">= 0");
            check(speculateAfter == null || !speculateAfter.isNegative(), "speculateAfter", speculateAfter, ">= 0");
            check(bestEffortMergeTimeout == null || !bestEffortMergeTimeout.isNegative(),
                    "bestEffortMerge", bestEffortMergeTimeout, ">= 0");
            check(splitPartitionsAbove >= 0, "splitPartitionsAbove", splitPartitionsAbove, ">= 0");
            if (splitPartitionsAbove > 0 && splitter == null) {
                throw bad("splitPartitionsAbove", splitPartitionsAbove, "a Splitter with it");
            }
            if (splitPartitionsAbove > 0 && blockSize != null) {
                throw bad("splitPartitionsAbove", splitPartitionsAbove, "0 with a positionedReducer (sub-partitions have no positions)");
            }
            return new ShuffleJob<>(new Plan<>(name, inputs, source, mappers, mapper, merger, reducer, blockSize,
                    streamingReducer, splitter, partitions, strategy, mergeFactor, mergeTargetBytes,
                    mapsPerRound, inputBytes, outputBytes == null ? -1 : outputBytes, speculateAfter,
                    bestEffortMergeTimeout, splitPartitionsAbove,
                    roundListener));
        }

        private static void check(boolean ok, String knob, Object value, String range) {
            if (!ok) {
                throw bad(knob, value, range);
            }
        }

        private static CroupierException bad(String knob, Object value, String allowed) {
            return new CroupierException(ErrorCode.BAD_INPUT,
                    "ShuffleJob.Builder." + knob + " = " + value + " is not allowed; needs " + allowed);
        }
    }
}
