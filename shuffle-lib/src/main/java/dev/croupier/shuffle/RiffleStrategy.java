package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * RIFFLE (pre-shuffle merge, after Riffle, EuroSys'18): map outputs on the same node are merged
 * F at a time into R larger blocks before reducers pull them, turning M x R small blocks into
 * M/F x R bigger ones. F is fixed, or chosen so that merged blocks reach a target size.
 *
 * <pre>
 *   node 0: map 0, map 2 ... --> merge (F maps) --+--> reduce r
 *   node 1: map 1, map 3 ... --> merge (F maps) --+
 * </pre>
 *
 * Maps are spread round-robin over nodes (soft affinity), so the maps of a group live on the
 * node of their merge task. A group left smaller than 2 is passed to the reducers unmerged.
 * With a {@link PackedMapper} each map returns its R blocks as one pack, so the maps make M
 * objects, not M x R, and a merge reads F; a group of one map is then merged too (a copy of
 * its parts), since a reducer elsewhere would have to fetch the whole pack for its part.
 */
final class RiffleStrategy<I, B, O> {
    private final ShuffleRun<I, B, O> run;

    RiffleStrategy(ShuffleRun<I, B, O> run) {
        this.run = run;
    }

    /** The merge factor: fixed, or target bytes over the expected size of one map block. */
    int factor() {
        long target = run.plan.mergeTargetBytes();
        long bytes = run.inputBytes();
        if (target <= 0 || bytes <= 0) {
            return run.plan.mergeFactor();
        }
        long blockBytes = Math.max(1, bytes / ((long) run.plan.mappers() * run.plan.partitions()));
        return (int) Math.max(2, Math.min(1 << 16, (target + blockBytes - 1) / blockBytes));
    }

    List<PartitionOutput<O>> run() {
        int partitions = run.plan.partitions();
        int factor = factor();
        int packs = run.packedMapper() == null ? 0 : 1;
        List<List<ObjectRef<B>>> maps = run.submitMaps(0, run.plan.mappers(), packs);
        List<Integer> all = IntStream.range(0, partitions).boxed().toList();
        List<List<ObjectRef<B>>> reduceInputs = ShuffleRun.noInputs(partitions);
        List<ShuffleRun.Merge<B>> merges = new ArrayList<>();
        int nodeCount = run.nodes.size();
        for (int n = 0; n < nodeCount; n++) {
            List<List<ObjectRef<B>>> onNode = new ArrayList<>();
            for (int i = n; i < maps.size(); i += nodeCount) {
                onNode.add(maps.get(i));
            }
            for (int g = 0; g < onNode.size(); g += factor) {
                List<List<ObjectRef<B>>> group = onNode.subList(g, Math.min(onNode.size(), g + factor));
                if (group.size() < 2 && packs == 0) {
                    for (int r = 0; r < partitions; r++) {
                        reduceInputs.get(r).add(group.getFirst().get(r));
                    }
                } else {
                    merges.add(run.submitMerge(group, packs > 0 ? 0 : -1, all, run.nodes.get(n)));
                }
            }
        }
        run.settle(merges, run.mergeDeadline(System.nanoTime()), reduceInputs);
        List<PartitionOutput<O>> outputs = run.submitReduces(reduceInputs);
        ShuffleRun.releaseAll(maps);
        run.releaseMerged(merges);
        return outputs;
    }
}
