package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.ObjectRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * A graph on simulated nodes, through the real owner: every task runs exactly once, every byte
 * the maps read reaches the last tasks, and once the driver releases its refs no node holds an
 * object and the owner tracks none. The graph here is an all-to-all shuffle (map i makes one
 * block per reducer, reducer r reads block r of every map); the benchmark's push* graph, as
 * {@code shuffle-lib} submits it, is checked the same way in the benchmarks' own tests.
 */
class SchedulingSimulationProperties {

    @Property(tries = 60)
    void everyTaskRunsOnceAndEveryObjectIsFreed(@ForAll @IntRange(min = 1, max = 6) int nodes,
                                                @ForAll @IntRange(min = 1, max = 3) int cpus,
                                                @ForAll @IntRange(min = 1, max = 40) int maps,
                                                @ForAll @IntRange(min = 1, max = 20) int reducers,
                                                @ForAll @IntRange(min = 0, max = 1_000_003) int partitionBytes)
            throws Exception {
        SchedulingSimulation.Shape shape = new SchedulingSimulation.Shape(nodes, cpus, maps, reducers, 1, Duration.ZERO,
                partitionBytes);
        SchedulingSimulation.Report report = SchedulingSimulation.run(shape, (cluster, s) -> {
            List<List<ObjectRef<Object>>> blocks = new ArrayList<>(s.maps());
            for (int i = 0; i < s.maps(); i++) {
                blocks.add(cluster.task(() -> null).name("map").onNode(i % s.nodes(), Affinity.SOFT)
                        .numReturns(s.reducers()).remote());
            }
            List<ObjectRef<Object>> outputs = new ArrayList<>(s.reducers());
            for (int r = 0; r < s.reducers(); r++) {
                List<ObjectRef<Object>> column = new ArrayList<>(s.maps());
                for (List<ObjectRef<Object>> map : blocks) {
                    column.add(map.get(r));
                }
                outputs.add(cluster.task((List<Object> in) -> null, ObjectRef.all(column)).name("reduce")
                        .onNode(r % s.nodes(), Affinity.SOFT).remote());
            }
            blocks.forEach(map -> map.forEach(ObjectRef::release));
            return outputs;
        }, false);
        report.requireAccounted(maps + reducers, (long) maps * partitionBytes);
    }

    @Property(tries = 10)
    void aFigureThatDiffersIsNamed(@ForAll @IntRange(min = 1, max = 5) int off) {
        SchedulingSimulation.Shape shape = new SchedulingSimulation.Shape(1, 1, 1, 1, 1, Duration.ZERO, 10);
        SchedulingSimulation.Report report = new SchedulingSimulation.Report(shape, 2, 0, 0, 0, 10, 1, 0, -1);
        report.requireAccounted(2, 10);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> report.requireAccounted(2 + off, 10));
        assertEquals("the simulation lost track: attempts run 2, not " + (2 + off), e.getMessage());
        assertThrows(IllegalStateException.class, () -> report.requireAccounted(2, 10 + off));
    }
}
