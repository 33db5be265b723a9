package dev.croupier.benchmarks.futures;

import dev.croupier.futures.internal.SchedulingSimulation;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

    /**
     * Many small graphs of instant tasks, each of which must end: outcomes are handled on
     * several threads at once, so a node's room freed on one thread while a task is moved on
     * another must still be used. A task taken from a node by another, found to have its
     * arguments there and put back, once stayed there with the node idle (about one graph in a
     * thousand, on two cores).
     */
    @Test
    void manyGraphsOfInstantTasksAllEnd() throws Exception {
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 10_000; i++) {
            SchedulingSimulation.Shape shape = new SchedulingSimulation.Shape(1 + random.nextInt(6),
                    1 + random.nextInt(3), 1 + random.nextInt(40), 1 + random.nextInt(20), 1 + random.nextInt(12),
                    Duration.ZERO, random.nextInt(1_000_004));
            CompletableFuture<Void> run = CompletableFuture.runAsync(() -> {
                try {
                    check(shape);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                run.get(10, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("graph " + i + " (" + shape + ") did not end in 10 s", e);
            }
        }
    }

    private static void check(SchedulingSimulation.Shape shape) throws Exception {
        SchedulingSimulation.run(shape, new PushStarSortGraph(), false)
                .requireAccounted(shape.tasks(), (long) shape.maps() * shape.inputPartitionBytes());
    }
}
