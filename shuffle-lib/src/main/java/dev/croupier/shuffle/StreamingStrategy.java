package dev.croupier.shuffle;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;

/**
 * STREAMING (online aggregation, the paper's Figure 7): maps run in rounds; after each round
 * every reducer folds that round's blocks into its running state (a chain of state objects,
 * one task per reducer per round, each on the reducer's node), and the driver hands the states
 * of the round to the {@link ShuffleJob.RoundListener}. Round k+1's maps are submitted before
 * round k's states are read, so mapping overlaps aggregation. The outputs are the final states.
 */
final class StreamingStrategy<I, B, O> {
    private final ShuffleRun<I, B, O> run;

    StreamingStrategy(ShuffleRun<I, B, O> run) {
        this.run = run;
    }

    List<PartitionOutput<O>> run() {
        int partitions = run.plan.partitions();
        StreamingReducer<B, O> update = run.plan.streamingReducer();
        int perRound = run.mapsPerRound();
        int rounds = (run.plan.mappers() + perRound - 1) / perRound;
        List<ObjectRef<O>> states = new ArrayList<>(partitions);
        for (int r = 0; r < partitions; r++) {
            states.add(null);
        }
        List<List<ObjectRef<B>>> maps = submitRound(0, perRound);
        for (int round = 0; round < rounds; round++) {
            List<List<ObjectRef<B>>> blocks = ShuffleRun.byPartition(maps, partitions);
            List<ObjectRef<O>> next = new ArrayList<>(partitions);
            for (int r = 0; r < partitions; r++) {
                int partition = r;
                ObjectRef<O> previous = states.get(r);
                ObjectRef<O> state = previous == null
                        ? run.cluster.task((List<B> bs) -> update.update(partition, null, bs), ObjectRef.all(blocks.get(r)))
                                .name(run.plan.name() + "-reduce").onNode(run.nodeOfReducer(r), Affinity.SOFT).remote()
                        : run.cluster.task((O s, List<B> bs) -> update.update(partition, s, bs), previous,
                                ObjectRef.all(blocks.get(r)))
                                .name(run.plan.name() + "-reduce").onNode(run.nodeOfReducer(r), Affinity.SOFT).remote();
                run.track("reduce", List.of(state));
                next.add(state);
                if (previous != null) {
                    previous.release();
                }
            }
            ShuffleRun.releaseAll(maps);
            states = next;
            if (round + 1 < rounds) {
                maps = submitRound(round + 1, perRound);
            }
            if (run.plan.roundListener() != null) {
                run.plan.roundListener().onRound(round, rounds, run.cluster.get(states));
            }
        }
        List<PartitionOutput<O>> outputs = new ArrayList<>(partitions);
        for (int r = 0; r < partitions; r++) {
            outputs.add(new PartitionOutput<>(r, 0, 1, states.get(r)));
        }
        return outputs;
    }

    private List<List<ObjectRef<B>>> submitRound(int round, int perRound) {
        List<List<ObjectRef<B>>> maps = new ArrayList<>(perRound);
        int first = round * perRound;
        for (int i = first; i < Math.min(run.plan.mappers(), first + perRound); i++) {
            maps.add(run.submitMap(i));
        }
        return maps;
    }
}
