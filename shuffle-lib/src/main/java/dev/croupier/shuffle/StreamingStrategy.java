package dev.croupier.shuffle;

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
        int perRound = run.mapsPerRound();
        int rounds = (run.plan.mappers() + perRound - 1) / perRound;
        List<ObjectRef<O>> states = null;
        List<List<ObjectRef<B>>> maps = submitRound(0, perRound);
        for (int round = 0; round < rounds; round++) {
            List<ObjectRef<O>> next = run.submitFolds(ShuffleRun.byPartition(maps, partitions), states);
            if (states != null) {
                states.forEach(ObjectRef::release);
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
        int first = round * perRound;
        return run.submitMaps(first, Math.min(run.plan.mappers(), first + perRound), 0);
    }
}
