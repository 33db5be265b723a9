package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.internal.SchedulingSimulation;
import dev.croupier.shuffle.SegmentPackMapper;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.Strategy;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The Exoshuffle paper's push* sort as {@code shuffle-lib} submits it: a
 * {@link Strategy#PUSH_PIPELINED} {@link ShuffleJob} of {@code shape.maps()} maps that pack
 * (one block per node from each), {@code shape.reducers()} partitions and rounds of
 * {@code shape.mapsPerRound()} maps. Its functions are never called: the simulated nodes only
 * hold slots and report sizes. Stateless, so thread-safe.
 */
final class PushStarSortGraph implements SchedulingSimulation.Graph {

    private static final String NOT_RUN = "a simulated cluster runs no task";

    @Override
    public List<? extends ObjectRef<?>> submit(Cluster cluster, SchedulingSimulation.Shape shape) {
        return ShuffleJob.<MemorySegment, MemorySegment, Long>builder()
                .name("sort")
                .source(shape.maps(), i -> {
                    throw new IllegalStateException(NOT_RUN);
                })
                .packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) -> {
                    throw new IllegalStateException(NOT_RUN);
                })
                .merger((p, blocks) -> {
                    throw new IllegalStateException(NOT_RUN);
                })
                .reducer((p, blocks) -> {
                    throw new IllegalStateException(NOT_RUN);
                })
                .partitions(shape.reducers())
                .mapsPerRound(shape.mapsPerRound())
                .strategy(Strategy.PUSH_PIPELINED)
                .build()
                .run(cluster)
                .refs();
    }
}
