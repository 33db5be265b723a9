package dev.croupier.shuffle.records;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.SegmentPackMapper;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * A random permutation of fixed-size records, as an ML training loop wants once per epoch.
 *
 * <pre>
 *   map i:     every record of input i to a random partition      (seed, epoch, i)    one run per partition
 *   [merge]:   concatenate                                         (RIFFLE, MAGNET, PUSH_PIPELINED)
 *   reduce r:  runs back in input order, then a random permutation (seed, epoch, r)
 * </pre>
 *
 * The outputs, in partition order, are a uniformly random permutation of the input: each record
 * picks its partition independently and uniformly, and each partition is then put in a uniformly
 * random order (Fisher-Yates), which together give every order of the records the same
 * probability (as far as the seeded generators are random), equal records included. The map
 * tasks tag their blocks with their input's index ({@link RunFrame}) and a reducer sorts its runs
 * by it before permuting, because the strategies hand a reducer its blocks in different groupings
 * and orders: this way the same seed and epoch give the same order on any cluster, under any
 * strategy, whatever AUTO chooses; another seed or epoch gives another order. Every random choice
 * is seeded by the input index or partition, never by timing, so lineage and speculation re-runs
 * agree. The order does depend on the number of partitions and on how the input is cut into blocks.
 *
 * <p>With {@link Builder#window(long)} the shuffle is partial and local: each input is permuted
 * only within consecutive windows of {@code w} of its records, and output partition {@code i} is
 * input {@code i} so permuted. A record then moves fewer than {@code w} places and never leaves
 * its input, which costs no exchange between nodes (a loader's shuffle buffer, done ahead).
 *
 * <p>Immutable; {@link #run} may be called more than once.
 */
public final class RandomShuffleJob {

    private record Settings(RecordLayout layout, List<ObjectRef<MemorySegment>> inputs, int partitions, long seed,
                            long epoch, long window, Strategy strategy, String name) {}

    private final Settings b;

    private RandomShuffleJob(Settings settings) {
        this.b = settings;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Submits the shuffle; returns when every reduce task is submitted. */
    public ShuffleResult<MemorySegment> run(Cluster cluster) {
        RecordLayout layout = b.layout;
        long seed = b.seed;
        long epoch = b.epoch;
        long window = b.window;
        boolean partial = window > 0;
        int partitions = partial ? b.inputs.size() : b.partitions > 0 ? b.partitions : b.inputs.size();
        return ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                .name(b.name)
                .inputs(b.inputs)
                .packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) -> {
                    if (!partial) {
                        return RunKernels.scatterRandom(layout, i, in, r, packs, mix(seed, epoch, MAP_STREAM, i));
                    }
                    int[] partitionOf = new int[Math.toIntExact(layout.records(in.byteSize()))];
                    java.util.Arrays.fill(partitionOf, i);
                    return RecordKernels.scatter(layout, in, partitionOf, r, packs);
                })
                .merger((int p, List<MemorySegment> blocks) -> RecordKernels.concat(blocks))
                .reducer((int p, List<MemorySegment> blocks) -> partial
                        ? RecordKernels.permute(layout, blocks, mix(seed, epoch, REDUCE_STREAM, p), window)
                        : RunKernels.permute(layout, blocks, mix(seed, epoch, REDUCE_STREAM, p), p))
                .partitions(partitions)
                .strategy(b.strategy)
                .build()
                .run(cluster);
    }

    private static final long MAP_STREAM = 1;
    private static final long REDUCE_STREAM = 2;

    /** One 64-bit seed from the user's seed, the epoch, the phase and the task (SplitMix64 finalizer). */
    static long mix(long seed, long epoch, long stream, long index) {
        long z = seed;
        for (long v : new long[] {epoch, stream, index}) {
            z = (z ^ v) * 0x9E3779B97F4A7C15L;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
        }
        return z;
    }

    /** Settings of a random shuffle, checked by {@link #build()}. Not thread-safe. */
    public static final class Builder extends RecordJobBuilder<Builder> {
        private RecordLayout layout = RecordLayout.SORT_BENCHMARK;
        private long seed;
        private long epoch;
        private long window;

        private Builder() {
            super("RandomShuffleJob", "random-shuffle");
        }

        /** Record size (default: 100-byte Sort Benchmark records); the key size does not matter here. */
        public Builder layout(RecordLayout layout) {
            this.layout = Objects.requireNonNull(layout, "layout");
            return this;
        }

        /** The permutation's seed (default 0). */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** The epoch, mixed into every seed: each epoch of a training run gets its own order (default 0). */
        public Builder epoch(long epoch) {
            this.epoch = epoch;
            return this;
        }

        /** A partial shuffle within windows of {@code records} records of each input (0, the default: full). */
        public Builder window(long records) {
            this.window = records;
            return this;
        }

        public RandomShuffleJob build() {
            requireInputs();
            checkPartitions();
            if (window < 0) {
                throw bad("window", window, ">= 1 record, or 0 for a full shuffle");
            }
            if (window > 0 && partitions > 0 && partitions != inputs.size()) {
                throw bad("partitions", partitions, "unset with window(...): a partial shuffle keeps one output per input");
            }
            return new RandomShuffleJob(new Settings(layout, inputs, partitions, seed, epoch, window, strategy, name));
        }
    }
}
