package dev.croupier.shuffle;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskBuilder;
import dev.croupier.futures.WaitResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One execution of a {@link ShuffleJob}: the pieces every strategy is made of (submit a map,
 * maps with speculation, a merge, the reduces; best-effort merge; skew splitting; its
 * {@link Phases}).
 * The strategies ({@link SimpleStrategy}, {@link RiffleStrategy}, {@link PushMergeStrategy},
 * {@link StreamingStrategy}) only arrange these into their task graphs.
 *
 * <p>Used by the one driver thread that called {@code run}; phase bookkeeping is updated from
 * completion callbacks and is thread-safe.
 */
final class ShuffleRun<I, B, O> {

    final Cluster cluster;
    final ShuffleJob.Plan<I, B, O> plan;
    final List<Integer> nodes;
    final Phases phases = new Phases();

    ShuffleRun(Cluster cluster, ShuffleJob.Plan<I, B, O> plan) {
        this.cluster = cluster;
        this.plan = plan;
        this.nodes = cluster.aliveNodes();
        if (nodes.isEmpty()) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "shuffle '" + plan.name() + "': no live node");
        }
    }

    ShuffleResult<O> run() {
        Strategy strategy = resolve(plan.strategy());
        List<PartitionOutput<O>> outputs = switch (strategy) {
            case SIMPLE -> new SimpleStrategy<>(this).run();
            case RIFFLE -> new RiffleStrategy<>(this).run();
            case MAGNET -> new PushMergeStrategy<>(this, false).run();
            case PUSH_PIPELINED -> new PushMergeStrategy<>(this, true).run();
            case STREAMING -> new StreamingStrategy<>(this).run();
            case AUTO -> throw new IllegalStateException("AUTO is resolved above");
        };
        return new ShuffleResult<>(cluster, strategy, outputs, phases::stats,
                speculated.get(), bestEffortFallbacks.get());
    }

    /**
     * AUTO: SIMPLE while what the stores hold at once, the map outputs and the reduce outputs
     * (as large as the input unless the job says, {@code outputBytes}), fits in three quarters
     * of the cluster's store memory (the paper's Figure 10(c): in memory, merging only adds
     * copies), PUSH_PIPELINED beyond (its Figure 10(a): out of core, merged blocks and bounded
     * rounds avoid small random I/O). On 6.8 GiB of stores, sorts of 4 and 5 GiB written into a
     * file ran no slower on SIMPLE, which spilled nothing, than on PUSH_PIPELINED, which spilled
     * at 5, and a 2 GiB sort kept in memory ran 1.6 times faster (docs/benchmarks.md).
     */
    Strategy resolve(Strategy requested) {
        if (requested != Strategy.AUTO) {
            return requested;
        }
        if (plan.merger() == null) {
            return Strategy.SIMPLE;
        }
        long bytes = inputBytes();
        long held = bytes + (plan.outputBytes() >= 0 ? plan.outputBytes() : bytes);
        long memory = cluster.objectStoreBytes() * nodes.size();
        return bytes > 0 && held > memory / 4 * 3 ? Strategy.PUSH_PIPELINED : Strategy.SIMPLE;
    }

    /** The input size: the builder's hint, else the sizes of ready input refs (0 if unknown). */
    long inputBytes() {
        if (plan.inputBytes() > 0 || plan.inputs() == null) {
            return plan.inputBytes();
        }
        long total = 0;
        for (ObjectRef<I> in : plan.inputs()) {
            total += Math.max(0, in.byteSize());
        }
        return total;
    }

    /**
     * Maps per round: the builder's, else two per live node, fewer when the input size is known
     * and a round's map outputs would fill more than an eighth of the stores' memory. A round
     * in flight holds its map outputs, the previous round's merge inputs and outputs, and the
     * merged blocks waiting for the reducers take the rest; rounds that fit keep map outputs
     * from ever being spilled (push*'s point). At least one map per node, so every node works.
     */
    int mapsPerRound() {
        if (plan.mapsPerRound() > 0) {
            return plan.mapsPerRound();
        }
        int perRound = 2 * nodes.size();
        long bytes = inputBytes();
        if (bytes > 0) {
            long perMap = Math.max(1, bytes / plan.mappers());
            long memory = cluster.objectStoreBytes() * nodes.size();
            perRound = (int) Math.max(nodes.size(), Math.min(perRound, memory / 8 / perMap));
        }
        return perRound;
    }

    /** The node map task {@code i} prefers: mappers are spread round-robin over live nodes. */
    int nodeOfMap(int i) {
        return nodes.get(i % nodes.size());
    }

    /** The node reducer {@code r} prefers: reducers are spread round-robin over live nodes. */
    int nodeOfReducer(int r) {
        return nodes.get(r % nodes.size());
    }

    // ---------------------------------------------------------------- tasks

    /**
     * Submits map task {@code i}; returns its R block refs, or with {@code packs > 0} its
     * {@code packs} packs ({@link PackedMapper}). With a positioned reducer the task also
     * returns its partitions' sizes as one more object, kept aside for {@link #positions()}.
     */
    @SuppressWarnings("unchecked")
    List<ObjectRef<B>> submitMap(int i, int packs) {
        int r = plan.partitions();
        IndexedMapper<I, B> mapper = plan.mapper();
        PackedMapper<I, B> packer = packs > 0 ? packedMapper() : null;
        BlockSize<B> size = plan.blockSize();
        int blockCount = packs > 0 ? packs : r;
        IndexedMapper<I, Object> task = (m, input, parts) -> {
            List<B> blocks = packer == null ? mapper.map(m, input, parts) : packer.mapPacked(m, input, parts, packs);
            if (size == null) {
                return (List<Object>) (List<?>) blocks;
            }
            long[] sizes = new long[packer == null ? blocks.size() : parts];
            for (int p = 0; p < sizes.length; p++) {
                sizes[p] = size.of(packer == null ? blocks.get(p) : packer.unpack(blocks.get(p % packs), p / packs));
            }
            List<Object> out = new ArrayList<>(blocks);
            out.add(sizes);
            return out;
        };
        TaskBuilder<List<Object>> builder;
        if (plan.inputs() != null) {
            builder = cluster.task((I input) -> task.map(i, input, r), plan.inputs().get(i));
        } else {
            ShuffleJob.Source<I> source = plan.source();
            builder = cluster.task(() -> task.map(i, source.read(i), r));
        }
        List<ObjectRef<Object>> refs = builder.name(plan.name() + "-map").onNode(nodeOfMap(i), Affinity.SOFT)
                .numReturns(size == null ? blockCount : blockCount + 1).remote();
        List<ObjectRef<B>> blocks = new ArrayList<>(blockCount);
        for (int p = 0; p < blockCount; p++) {
            blocks.add((ObjectRef<B>) (ObjectRef<?>) refs.get(p));
        }
        if (size != null) {
            mapSizes.computeIfAbsent(i, k -> new ArrayList<>()).add((ObjectRef<long[]>) (ObjectRef<?>) refs.get(blockCount));
        }
        phases.track("map", blocks);
        return blocks;
    }

    /** The plan's mapper if it packs, else null. */
    PackedMapper<I, B> packedMapper() {
        return plan.mapper() instanceof PackedMapper<I, B> packer ? packer : null;
    }

    /** Per map input, its block sizes: one ref per attempt (speculation adds one); positioned reducers only. */
    private final Map<Integer, List<ObjectRef<long[]>>> mapSizes = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The position of every partition: the sizes of all lower partitions' blocks, summed over
     * the maps. Waits for every map; an attempt cancelled by speculation gives way to the other.
     */
    private long[] positions() {
        int partitions = plan.partitions();
        long[] perPartition = new long[partitions];
        for (int i = 0; i < plan.mappers(); i++) {
            long[] sizes = null;
            CroupierException failure = null;
            for (ObjectRef<long[]> attempt : mapSizes.getOrDefault(i, List.of())) {
                if (sizes == null) {
                    try {
                        sizes = attempt.get();
                    } catch (CroupierException e) {
                        failure = e;
                    }
                }
                attempt.release();
            }
            if (sizes == null) {
                throw failure != null ? failure
                        : new IllegalStateException("shuffle '" + plan.name() + "': map " + i + " reported no sizes");
            }
            if (sizes.length != partitions) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "shuffle '" + plan.name() + "': map " + i
                        + " returned " + sizes.length + " blocks for " + partitions + " partitions");
            }
            for (int p = 0; p < partitions; p++) {
                perPartition[p] += sizes[p];
            }
        }
        mapSizes.clear();
        long[] positions = new long[partitions];
        for (int p = 1; p < partitions; p++) {
            positions[p] = positions[p - 1] + perPartition[p - 1];
        }
        return positions;
    }

    /**
     * Submits maps {@code first} to {@code last - 1}, with speculation when asked (which waits
     * until each of them is decided); returns blocks[map - first][partition], or with
     * {@code packs > 0} packs[map - first][pack].
     */
    List<List<ObjectRef<B>>> submitMaps(int first, int last, int packs) {
        List<List<ObjectRef<B>>> maps = new ArrayList<>(last - first);
        for (int i = first; i < last; i++) {
            maps.add(submitMap(i, packs));
        }
        if (plan.speculateAfter() != null) {
            maps = Speculation.decide(cluster, maps, k -> submitMap(first + k, packs), plan.speculateAfter(), speculated);
        }
        return maps;
    }

    final AtomicLong speculated = new AtomicLong();

    /**
     * A merge task: it read, from each of {@code maps}, the blocks of {@code partitions} (from
     * pack {@code pack} of each, or from their own blocks when {@code pack} is -1), and returned
     * one merged block per partition ({@code merged}). The maps are kept only with best-effort
     * merge, whose fallback sends them to the reducers ({@link #settle}); otherwise the list is
     * empty, so that the driver drops its refs (at 100 TB, 5 million of them) with its claims.
     */
    record Merge<B>(List<List<ObjectRef<B>>> maps, int pack, List<Integer> partitions, List<ObjectRef<B>> merged) {}

    /**
     * Submits one merge task on {@code node}: it reads, from every map output of {@code maps},
     * the blocks of {@code partitions}, which are the parts of pack {@code pack} when the maps
     * packed (-1 when they did not), and returns one merged block per partition.
     */
    Merge<B> submitMerge(List<List<ObjectRef<B>>> maps, int pack, List<Integer> partitions, int node) {
        Merger<B> merger = plan.merger();
        PackedMapper<I, B> packer = pack < 0 ? null : packedMapper();
        int[] parts = partitions.stream().mapToInt(Integer::intValue).toArray();
        List<ObjectRef<B>> inputs = new ArrayList<>(pack < 0 ? maps.size() * parts.length : maps.size());
        for (List<ObjectRef<B>> map : maps) {
            if (pack >= 0) {
                inputs.add(map.get(pack));
                continue;
            }
            for (int p : parts) {
                inputs.add(map.get(p));
            }
        }
        List<ObjectRef<B>> merged = cluster.task((List<B> blocks) -> {
            int k = parts.length;
            int sources = packer == null ? blocks.size() / k : blocks.size();
            List<B> out = new ArrayList<>(k);
            List<B> column = new ArrayList<>(sources);
            for (int p = 0; p < k; p++) {
                column.clear();
                for (int s = 0; s < sources; s++) {
                    column.add(packer == null ? blocks.get(s * k + p) : packer.unpack(blocks.get(s), p));
                }
                out.add(merger.merge(parts[p], column));
            }
            return out;
        }, ObjectRef.all(inputs)).name(plan.name() + "-merge").onNode(node, Affinity.SOFT)
                .<B>numReturns(parts.length).remote();
        phases.track("merge", merged);
        return new Merge<>(plan.bestEffortMergeTimeout() == null ? List.of() : List.copyOf(maps), pack,
                List.copyOf(partitions), merged);
    }

    /**
     * Adds what {@code merges} made to the reducers' inputs ({@code reduceInputs.get(r)} for
     * partition r), in order. With best-effort merge, waits for them until
     * {@code deadlineNanos}; a merge not done by then is cancelled and the map blocks it would
     * have read go to the reducers as they are (a pack's part taken out of it by a task of its
     * own on the reducer's node).
     */
    void settle(List<Merge<B>> merges, long deadlineNanos, List<List<ObjectRef<B>>> reduceInputs) {
        java.util.Set<Merge<B>> cancelled = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        if (plan.bestEffortMergeTimeout() != null && !merges.isEmpty()) {
            List<ObjectRef<B>> firsts = new ArrayList<>(merges.size());
            for (Merge<B> m : merges) {
                firsts.add(m.merged().getFirst());
            }
            long left = Math.max(0, deadlineNanos - System.nanoTime());
            WaitResult<B> w = cluster.wait(firsts, firsts.size(), Duration.ofNanos(left));
            for (ObjectRef<B> pending : w.pending()) {
                if (cluster.cancel(pending)) {
                    bestEffortFallbacks.incrementAndGet();
                    cancelled.add(merges.get(firsts.indexOf(pending)));
                }
            }
        }
        for (Merge<B> m : merges) {
            boolean merged = !cancelled.contains(m);
            for (int j = 0; j < m.partitions().size(); j++) {
                int r = m.partitions().get(j);
                if (merged) {
                    reduceInputs.get(r).add(m.merged().get(j));
                    continue;
                }
                for (List<ObjectRef<B>> map : m.maps()) {
                    reduceInputs.get(r).add(m.pack() < 0 ? map.get(r) : unpack(map.get(m.pack()), j, r));
                }
            }
        }
    }

    /** Parts taken out of packs for reducers by {@link #settle}, released with the merged blocks. */
    private final List<ObjectRef<B>> unpacked = new ArrayList<>();

    /** A task on reducer {@code r}'s node that returns part {@code k} of {@code pack}. */
    private ObjectRef<B> unpack(ObjectRef<B> pack, int k, int r) {
        PackedMapper<I, B> packer = packedMapper();
        ObjectRef<B> part = cluster.task((B b) -> packer.unpack(b, k), pack).name(plan.name() + "-unpack")
                .onNode(nodeOfReducer(r), Affinity.SOFT).remote();
        phases.track("unpack", List.of(part));
        unpacked.add(part);
        return part;
    }

    /** The deadline of best-effort merges submitted at {@code submittedNanos} (0 without best effort). */
    long mergeDeadline(long submittedNanos) {
        return plan.bestEffortMergeTimeout() == null ? 0 : submittedNanos + plan.bestEffortMergeTimeout().toNanos();
    }

    final AtomicLong bestEffortFallbacks = new AtomicLong();

    /**
     * Submits the reduce tasks, partition {@code r} reading {@code inputs.get(r)}, each on its
     * preferred node; splits partitions larger than the skew limit. Returns the outputs in
     * partition order.
     */
    List<PartitionOutput<O>> submitReduces(List<List<ObjectRef<B>>> inputs) {
        List<PartitionOutput<O>> outputs = new ArrayList<>(inputs.size());
        PositionedReducer<B, O> reducer = plan.reducer();
        long[] positions = plan.blockSize() == null ? null : positions();
        for (int r = 0; r < inputs.size(); r++) {
            List<ObjectRef<B>> blocks = inputs.get(r);
            int ways = plan.splitPartitionsAbove() > 0 ? SkewSplit.waysFor(blocks, plan.splitPartitionsAbove()) : 1;
            if (ways > 1) {
                outputs.addAll(SkewSplit.submit(this, r, blocks, ways));
                continue;
            }
            int partition = r;
            long position = positions == null ? -1 : positions[r];
            ObjectRef<O> out = cluster.task((List<B> bs) -> reducer.reduce(partition, position, bs), ObjectRef.all(blocks))
                    .name(plan.name() + "-reduce").onNode(nodeOfReducer(r), Affinity.SOFT).remote();
            phases.track("reduce", List.of(out));
            outputs.add(new PartitionOutput<>(r, 0, 1, out));
        }
        return outputs;
    }

    /**
     * Submits one round of {@link StreamingReducer} updates: partition r folds
     * {@code inputs.get(r)} into {@code states.get(r)} ({@code states} is null before the first
     * round). Returns the new states in partition order.
     */
    List<ObjectRef<O>> submitFolds(List<List<ObjectRef<B>>> inputs, List<ObjectRef<O>> states) {
        StreamingReducer<B, O> update = plan.streamingReducer();
        List<ObjectRef<O>> next = new ArrayList<>(inputs.size());
        for (int r = 0; r < inputs.size(); r++) {
            int partition = r;
            ObjectRef<O> previous = states == null ? null : states.get(r);
            TaskBuilder<O> task = previous == null
                    ? cluster.task((List<B> bs) -> update.update(partition, null, bs), ObjectRef.all(inputs.get(r)))
                    : cluster.task((O s, List<B> bs) -> update.update(partition, s, bs), previous, ObjectRef.all(inputs.get(r)));
            ObjectRef<O> state = task.name(plan.name() + "-reduce").onNode(nodeOfReducer(r), Affinity.SOFT).remote();
            phases.track("reduce", List.of(state));
            next.add(state);
        }
        return next;
    }

    /** An empty list of inputs for each of {@code partitions} reducers. */
    static <B> List<List<ObjectRef<B>>> noInputs(int partitions) {
        List<List<ObjectRef<B>>> inputs = new ArrayList<>(partitions);
        for (int r = 0; r < partitions; r++) {
            inputs.add(new ArrayList<>());
        }
        return inputs;
    }

    /** Transposes blocks[source][partition] into inputs[partition][source]. */
    static <B> List<List<ObjectRef<B>>> byPartition(List<List<ObjectRef<B>>> blocks, int partitions) {
        List<List<ObjectRef<B>>> inputs = new ArrayList<>(partitions);
        for (int r = 0; r < partitions; r++) {
            List<ObjectRef<B>> column = new ArrayList<>(blocks.size());
            for (List<ObjectRef<B>> source : blocks) {
                column.add(source.get(r));
            }
            inputs.add(column);
        }
        return inputs;
    }

    /** Drops the driver's claims on the outputs of tasks, {@code refs.get(t)} being task {@code t}'s. */
    static <B> void releaseAll(List<? extends List<ObjectRef<B>>> refs) {
        for (List<ObjectRef<B>> list : refs) {
            list.forEach(ObjectRef::release);
        }
    }

    /** Releases the driver's claims on what {@code merges} made, and on the parts unpacked for reducers. */
    void releaseMerged(List<Merge<B>> merges) {
        for (Merge<B> m : merges) {
            m.merged().forEach(ObjectRef::release);
        }
        unpacked.forEach(ObjectRef::release);
        unpacked.clear();
    }
}
