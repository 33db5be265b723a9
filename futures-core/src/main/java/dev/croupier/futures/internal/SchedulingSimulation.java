package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.ObjectRef;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Exoshuffle paper's push* sort as a task graph, submitted to the real owner over
 * {@link SimulatedBackend} nodes that run nothing: a measure of what one driver can schedule,
 * and of the heap its metadata takes, at a scale no test machine holds.
 *
 * <p>The graph, as the paper's push-based shuffle builds it ({@code W} nodes, maps in rounds
 * of {@code mapsPerRound}):
 * <pre>
 *   map i (on node i mod W)      --> W blocks, block n for node n's merge
 *   merge(k, n) (on node n)      <-- block n of every map of round k
 *                                --> one block per reducer of node n (reducer r is on node r mod W)
 *   reduce r (on node r mod W)   <-- its block from every round's merge
 * </pre>
 * At most one round of merges is in flight: round k's merges are submitted after round k+1's
 * maps, once round k-1's merges are done; the driver drops its refs to a round's map blocks
 * as soon as their merges are submitted. Each task holds one slot for {@code taskTime}.
 *
 * <p>Thread-safety: {@link #run} and {@link #heapCost} are each self-contained (a cluster of
 * their own); heap figures are only meaningful when nothing else runs in the JVM.
 */
public final class SchedulingSimulation {

    private SchedulingSimulation() {}

    /**
     * A push* graph and the simulated cluster under it.
     *
     * @param nodes {@code W}
     * @param mapsPerRound maps per round of merges (the paper: one per CPU of the cluster)
     * @param taskTime how long every task holds its CPU slot
     * @param inputPartitionBytes what each map reads, so what flows through the graph
     */
    public record Shape(int nodes, int cpusPerNode, int maps, int reducers, int mapsPerRound, Duration taskTime,
                        long inputPartitionBytes) {

        public Shape {
            if (nodes < 1 || cpusPerNode < 1 || maps < 1 || reducers < 1 || mapsPerRound < 1) {
                throw new IllegalArgumentException("nodes, cpusPerNode, maps, reducers and mapsPerRound must be at least 1: "
                        + nodes + ", " + cpusPerNode + ", " + maps + ", " + reducers + ", " + mapsPerRound);
            }
            if (taskTime.isNegative() || inputPartitionBytes < 0) {
                throw new IllegalArgumentException("taskTime and inputPartitionBytes must not be negative");
            }
        }

        /**
         * The paper's 100 TB sort: 2 GB input partitions (50,000 maps) and as many output
         * partitions, 100 nodes of 8 CPUs, rounds of one map per CPU.
         */
        public static Shape sort100TB(Duration taskTime) {
            return new Shape(100, 8, 50_000, 50_000, 800, taskTime, 2_000_000_000L);
        }

        public int rounds() {
            return (maps + mapsPerRound - 1) / mapsPerRound;
        }

        /** Nodes that serve at least one reducer, so run a merge per round. */
        int mergingNodes() {
            return Math.min(nodes, reducers);
        }

        public long tasks() {
            return (long) maps + (long) rounds() * mergingNodes() + reducers;
        }

        /** Objects the graph makes: map blocks, merged blocks, reducer outputs. */
        public long objects() {
            return (long) maps * mergingNodes() + (long) rounds() * reducers + reducers;
        }
    }

    /**
     * One run.
     *
     * @param tasksRun attempts the nodes ran (each task once when nothing failed)
     * @param retried attempts the owner dispatched again
     * @param objectsLeft objects the nodes still hold once every ref is released
     * @param entriesLeft objects the owner still tracks once every ref is released
     * @param reducedBytes bytes the reducers made: the input's size when the graph is right
     * @param seconds from the first submission to the last reducer's completion
     * @param slotUtilization task time over slot time in that interval
     * @param graphHeapBytes driver heap held by the whole graph's metadata with its outputs'
     *     refs held (every task's lineage is reachable then), after a full collection; -1 when
     *     not measured
     */
    public record Report(Shape shape, long tasksRun, long retried, long objectsLeft, long entriesLeft, long reducedBytes,
                         double seconds, double slotUtilization, long graphHeapBytes) {

        public double tasksPerSecond() {
            return shape.tasks() / seconds;
        }
    }

    /**
     * Runs {@code shape}'s graph to the end, releases everything, and reports; with
     * {@code measureHeap}, collects garbage before and at the end (outside the timed part).
     */
    public static Report run(Shape shape, boolean measureHeap) throws InterruptedException {
        SimulatedBackend backend = new SimulatedBackend(shape.nodes, shape.cpusPerNode, shape.taskTime.toNanos(),
                shape.inputPartitionBytes, 0);
        long heapBefore = measureHeap ? heapAfterCollection() : 0;
        try (OwnerCluster cluster = new OwnerCluster(new ValueCodecs(Map.of(), List.of()), backend,
                EmbeddedBackend.newTag(), 0)) {
            int w = shape.nodes;
            List<List<ObjectRef<Object>>> reduceInputs = new ArrayList<>(shape.reducers);
            for (int r = 0; r < shape.reducers; r++) {
                reduceInputs.add(new ArrayList<>(shape.rounds()));
            }
            long start = System.nanoTime();
            List<ObjectRef<Object>> previousMerges = List.of();
            for (int first = 0; first < shape.maps; first += shape.mapsPerRound) {
                int last = Math.min(shape.maps, first + shape.mapsPerRound);
                List<List<ObjectRef<Object>>> maps = new ArrayList<>(last - first);
                for (int i = first; i < last; i++) {
                    maps.add(cluster.task(() -> null).name("map").onNode(i % w, Affinity.SOFT)
                            .numReturns(shape.mergingNodes()).remote());
                }
                awaitAll(previousMerges);
                List<ObjectRef<Object>> merges = new ArrayList<>(w);
                for (int n = 0; n < shape.mergingNodes(); n++) {
                    List<ObjectRef<Object>> blocks = new ArrayList<>(maps.size());
                    for (List<ObjectRef<Object>> map : maps) {
                        blocks.add(map.get(n));
                    }
                    int reducersHere = (shape.reducers - n + w - 1) / w;
                    List<ObjectRef<Object>> merged = cluster.task((List<Object> in) -> null, ObjectRef.all(blocks))
                            .name("merge").onNode(n, Affinity.SOFT).numReturns(reducersHere).remote();
                    for (int j = 0; j < reducersHere; j++) {
                        reduceInputs.get(n + j * w).add(merged.get(j));
                    }
                    merges.add(merged.getFirst());
                }
                maps.forEach(SchedulingSimulation::releaseAll);
                previousMerges = merges;
            }
            List<ObjectRef<Object>> outputs = new ArrayList<>(shape.reducers);
            for (int r = 0; r < shape.reducers; r++) {
                outputs.add(cluster.task((List<Object> in) -> null, ObjectRef.all(reduceInputs.get(r)))
                        .name("reduce").onNode(r % w, Affinity.SOFT).remote());
                releaseAll(reduceInputs.get(r));
            }
            awaitAll(outputs);
            double seconds = (System.nanoTime() - start) / 1e9;
            long graphHeap = measureHeap ? heapAfterCollection() - heapBefore : -1;
            releaseAll(outputs);
            ClusterStats stats = cluster.stats();
            long reduced = stats.tasks().stream().filter(t -> t.name().equals("reduce"))
                    .mapToLong(ClusterStats.TaskStats::bytesOut).sum();
            double slotSeconds = seconds * shape.nodes * shape.cpusPerNode;
            return new Report(shape, stats.nodes().stream().mapToLong(ClusterStats.NodeStats::tasksRun).sum(),
                    stats.failures().retriedTasks(), stats.nodes().stream().mapToLong(ClusterStats.NodeStats::objects).sum(),
                    cluster.liveEntries(), reduced, seconds,
                    shape.tasks() * (shape.taskTime.toNanos() / 1e9) / slotSeconds, graphHeap);
        }
    }

    /**
     * Driver heap per task and per object, from two sets of tasks that wait on an argument
     * that never comes (so nothing is dispatched or freed, and each task holds one argument
     * ref, as most do): many tasks of one output, then fewer of many outputs. The two figures
     * solve {@code heap = tasks * perTask + objects * perObject}.
     */
    public record HeapCost(double bytesPerTask, double bytesPerObject) {

        public static HeapCost measure(int tasks) throws InterruptedException {
            int wide = 100;
            double single = heapOf(tasks, 1) / (double) tasks;
            double multi = heapOf(tasks / wide, wide) / (double) (tasks / wide);
            double perObject = (multi - single) / (wide - 1);
            return new HeapCost(single - perObject, perObject);
        }

        private static long heapOf(int tasks, int returns) throws InterruptedException {
            SimulatedBackend backend = new SimulatedBackend(1, 1, Duration.ofDays(1).toNanos(), 0, 0);
            try (OwnerCluster cluster = new OwnerCluster(new ValueCodecs(Map.of(), List.of()), backend,
                    EmbeddedBackend.newTag(), 0)) {
                ObjectRef<Object> never = cluster.task(() -> null).name("gate").remote();
                List<List<ObjectRef<Object>>> held = new ArrayList<>(tasks);
                long before = heapAfterCollection();
                for (int t = 0; t < tasks; t++) {
                    held.add(cluster.task((Object gate) -> null, never).name("t").numReturns(returns).remote());
                }
                long heap = heapAfterCollection() - before;
                if (held.size() != tasks || never.whenDone().isDone()) {
                    throw new IllegalStateException("the tasks must still wait when measured");
                }
                return heap;
            }
        }
    }

    private static void awaitAll(List<ObjectRef<Object>> refs) {
        for (ObjectRef<Object> ref : refs) {
            ref.whenDone().join();
        }
    }

    private static void releaseAll(List<ObjectRef<Object>> refs) {
        refs.forEach(ObjectRef::release);
    }

    /**
     * Heap in use once full collections stop freeing anything: a ref dropped since the last
     * collection is freed only after the cleaner thread has run its release, a collection later.
     */
    private static long heapAfterCollection() throws InterruptedException {
        var memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 20; i++) {
            memory.gc();
            Thread.sleep(50);
            long now = memory.getHeapMemoryUsage().getUsed();
            if (used - now < 256 * 1024) {
                return now;
            }
            used = now;
        }
        return used;
    }
}
