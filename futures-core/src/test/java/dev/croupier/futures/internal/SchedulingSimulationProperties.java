package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
        assertEquals(maps + reducers, report.tasksRun(), "attempts run");
        assertEquals(0, report.retried(), "attempts retried");
        assertEquals((long) maps * partitionBytes, report.outputBytes(), "bytes reduced");
        assertEquals(0, report.objectsLeft(), "objects the nodes still hold");
        assertEquals(0, report.entriesLeft(), "objects the owner still tracks");
    }
}
