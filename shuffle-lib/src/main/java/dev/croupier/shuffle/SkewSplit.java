package dev.croupier.shuffle;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Dynamic splitting of a skewed partition (the paper's Figure 6): when a partition's blocks
 * total more than the limit, each block is split into {@code ways} sub-blocks by the
 * {@link Splitter}, and sub-reducer {@code k} reduces sub-block {@code k} of every block. The
 * driver waits for the partition's blocks to learn their sizes.
 */
final class SkewSplit {

    /** Most sub-partitions one partition is split into. */
    static final int MAX_WAYS = 1024;

    private SkewSplit() {}

    static <B> int waysFor(List<ObjectRef<B>> blocks, long limit) {
        long bytes = 0;
        for (ObjectRef<B> b : blocks) {
            bytes += Math.max(0, b.whenDone().join().byteSize());
        }
        return (int) Math.min(MAX_WAYS, Math.max(1, (bytes + limit - 1) / limit));
    }

    static <I, B, O> List<PartitionOutput<O>> submit(ShuffleRun<I, B, O> run, int partition,
                                                      List<ObjectRef<B>> blocks, int ways) {
        Splitter<B> splitter = run.plan.splitter();
        PositionedReducer<B, O> reducer = run.plan.reducer(); // never positioned: the builder refuses both
        List<List<ObjectRef<B>>> pieces = new ArrayList<>(blocks.size());
        for (ObjectRef<B> block : blocks) {
            List<ObjectRef<B>> split = run.cluster.task((B b) -> splitter.split(partition, b, ways), block)
                    .name(run.plan.name() + "-split").<B>numReturns(ways).remote();
            run.phases.track("split", split);
            pieces.add(split);
        }
        List<List<ObjectRef<B>>> inputs = ShuffleRun.byPartition(pieces, ways);
        List<PartitionOutput<O>> outputs = new ArrayList<>(ways);
        for (int k = 0; k < ways; k++) {
            ObjectRef<O> out = run.cluster.task((List<B> bs) -> reducer.reduce(partition, -1, bs), ObjectRef.all(inputs.get(k)))
                    .name(run.plan.name() + "-reduce").onNode(run.nodeOfReducer(partition + k), Affinity.SOFT).remote();
            run.phases.track("reduce", List.of(out));
            outputs.add(new PartitionOutput<>(partition, k, ways, out));
        }
        ShuffleRun.releaseAll(pieces);
        return outputs;
    }
}
