package dev.croupier.benchmarks.futures;

import dev.croupier.futures.internal.SchedulingSimulation;
import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@code shuffle-lib}'s push* sort on simulated nodes, through the real owner: it runs exactly
 * the tasks of the paper's graph, each once, every byte the maps read reaches the reducers, and
 * once the driver releases its refs no node holds an object and the owner tracks none.
 */
class PushStarSortGraphProperties {

    @Property(tries = 60)
    void everyTaskRunsOnceAndEveryObjectIsFreed(@ForAll @IntRange(min = 1, max = 6) int nodes,
                                                @ForAll @IntRange(min = 1, max = 3) int cpus,
                                                @ForAll @IntRange(min = 1, max = 40) int maps,
                                                @ForAll @IntRange(min = 1, max = 20) int reducers,
                                                @ForAll @IntRange(min = 1, max = 12) int mapsPerRound,
                                                @ForAll @IntRange(min = 0, max = 1_000_003) int partitionBytes)
            throws Exception {
        check(new SchedulingSimulation.Shape(nodes, cpus, maps, reducers, mapsPerRound, Duration.ZERO, partitionBytes));
    }

    /** The 100 TB sort's graph at 1/100 of its maps and reducers and 1/10 of its nodes. */
    @Test
    void smallVersionOfThe100TBSort() throws Exception {
        SchedulingSimulation.Shape full = SchedulingSimulation.Shape.sort100TB(Duration.ofSeconds(2));
        check(new SchedulingSimulation.Shape(full.nodes() / 10, full.cpusPerNode(), full.maps() / 100,
                full.reducers() / 100, full.mapsPerRound() / 10, Duration.ofMillis(1), full.inputPartitionBytes()));
    }

    private static void check(SchedulingSimulation.Shape shape) throws Exception {
        SchedulingSimulation.run(shape, new PushStarSortGraph(), false)
                .requireAccounted(shape.tasks(), (long) shape.maps() * shape.inputPartitionBytes());
    }
}
