package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;

/**
 * MAGNET and PUSH_PIPELINED (push-based shuffle, after Magnet, VLDB'20, and the Exoshuffle
 * paper's push*). Reducers are spread over the nodes; maps run in rounds; after each round,
 * one merge task per node takes, from every map of the round, the blocks of that node's
 * reducers and merges them per reducer. Each reducer then runs on its node (soft affinity) over
 * its merged blocks, one per round.
 *
 * <pre>
 *   round k:  map .. map   --push blocks of node n's reducers-->  merge(k, n) on node n
 *   end:      reduce r on node(r) <-- merge(0, n), merge(1, n), ... (one block per round)
 * </pre>
 *
 * With a {@link PackedMapper} each map returns one pack per merging node, holding that node's
 * reducers' blocks, so a round of M maps on W nodes makes M x W objects, not M x R, and a merge
 * reads one object per map. Otherwise each map returns one block per reducer.
 *
 * MAGNET submits every round at once, keeps the map outputs until every merge is done (so under
 * memory pressure they spill) and, like Magnet's merge finalization, starts the reducers then.
 * PUSH_PIPELINED applies backpressure with {@code wait}: a round's maps are submitted once the
 * merges of the round two before are done, so one round of merges overlaps the next round's
 * maps. Each round's merges are submitted with its maps, and the driver drops its claims on a
 * round's map outputs right after, so they are freed the moment they are merged and never reach
 * disk. With best-effort merge, a round's merges that miss the timeout are cancelled and their
 * map blocks go to the reducers as they are.
 */
final class PushMergeStrategy<I, B, O> {
    private final ShuffleRun<I, B, O> run;
    private final boolean pipelined;

    PushMergeStrategy(ShuffleRun<I, B, O> run, boolean pipelined) {
        this.run = run;
        this.pipelined = pipelined;
    }

    /** One round: its maps, and per node the merge task of the reducers it serves. */
    private final class Round {
        List<List<ObjectRef<B>>> maps;
        final List<ShuffleRun.Merge<B>> merges = new ArrayList<>();
        long submitted;

        /** Blocks until every merge of the round is done. */
        void awaitMerges() {
            for (ShuffleRun.Merge<B> m : merges) {
                m.merged().getFirst().whenDone().join();
            }
        }
    }

    List<PartitionOutput<O>> run() {
        int partitions = run.plan.partitions();
        int nodeCount = run.nodes.size();
        List<List<Integer>> reducersOfNode = new ArrayList<>(nodeCount);
        for (int n = 0; n < nodeCount; n++) {
            List<Integer> rs = new ArrayList<>();
            for (int r = n; r < partitions; r += nodeCount) {
                rs.add(r);
            }
            reducersOfNode.add(rs);
        }
        // Pack g is the g-th node's: the nodes that serve a reducer are the first min(W, R).
        int packs = run.packedMapper() == null ? 0 : Math.min(nodeCount, partitions);
        List<List<ObjectRef<B>>> reduceInputs = ShuffleRun.noInputs(partitions);
        List<Round> rounds = new ArrayList<>();
        int perRound = run.mapsPerRound();
        Round previous = null;
        for (int first = 0; first < run.plan.mappers(); first += perRound) {
            Round round = new Round();
            round.maps = run.submitMaps(first, Math.min(run.plan.mappers(), first + perRound), packs);
            // The round's merges go in with its maps, each to start when its maps are done, so
            // the driver's work on them (an argument per map) overlaps running tasks instead of
            // holding up the next round's maps after the wait below.
            for (int n = 0; n < nodeCount; n++) {
                if (!reducersOfNode.get(n).isEmpty()) {
                    round.merges.add(run.submitMerge(round.maps, packs > 0 ? n : -1, reducersOfNode.get(n), run.nodes.get(n)));
                }
            }
            if (pipelined && run.plan.bestEffortMergeTimeout() == null) {
                ShuffleRun.releaseAll(round.maps);
                round.maps = List.of(); // the merges' specs hold the entries; the refs may go
            }
            if (pipelined && previous != null) {
                settle(previous, reduceInputs);
                // Backpressure: the next round's maps wait until the merges of this one's
                // predecessor are done.
                previous.awaitMerges();
            }
            // A best-effort deadline counts from here: until the previous round's merges are
            // done, this round's may wait behind them.
            round.submitted = System.nanoTime();
            rounds.add(round);
            previous = round;
        }
        if (pipelined) {
            settle(previous, reduceInputs);
        } else {
            for (Round round : rounds) {
                settle(round, reduceInputs);
            }
            // Like Magnet's merge finalization: the reduce stage starts once every merge is done.
            rounds.forEach(Round::awaitMerges);
        }
        List<PartitionOutput<O>> outputs = run.submitReduces(reduceInputs);
        rounds.forEach(round -> ShuffleRun.releaseAll(round.maps));
        rounds.forEach(round -> run.releaseMerged(round.merges));
        return outputs;
    }

    private void settle(Round round, List<List<ObjectRef<B>>> reduceInputs) {
        run.settle(round.merges, run.mergeDeadline(round.submitted), reduceInputs);
    }
}
