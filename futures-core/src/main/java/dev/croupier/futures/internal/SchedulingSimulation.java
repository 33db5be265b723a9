package dev.croupier.futures.internal;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.ObjectRef;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A task graph submitted to the real owner over {@link SimulatedBackend} nodes that run
 * nothing: a measure of what one driver can schedule, and of the heap its metadata takes, at a
 * scale no test machine holds. The graph is the caller's ({@link Graph}); the benchmark's is
 * the Exoshuffle paper's 100 TB push* sort as {@code shuffle-lib}'s PUSH_PIPELINED strategy
 * submits it, whose shape {@link Shape} describes:
 * <pre>
 *   map i (on node i mod W)      --> W blocks, block n for node n's merge
 *   merge(k, n) (on node n)      <-- block n of every map of round k
 *                                --> one block per reducer of node n (reducer r is on node r mod W)
 *   reduce r (on node r mod W)   <-- its block from every round's merge
 * </pre>
 * Each task holds one slot for {@code taskTime}.
 *
 * <p>Thread-safety: {@link #run} and {@link HeapCost#measure} are each self-contained (a
 * cluster of their own); heap figures are only meaningful when nothing else runs in the JVM.
 */
public final class SchedulingSimulation {

    private SchedulingSimulation() {}

    /** What a simulation schedules: a graph submitted on the simulated cluster. */
    @FunctionalInterface
    public interface Graph {
        /**
         * Submits the graph of {@code shape} on {@code cluster}; returns the refs of its final
         * outputs, which the simulation waits for and then releases.
         */
        List<? extends ObjectRef<?>> submit(Cluster cluster, Shape shape) throws Exception;
    }

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

        /** Tasks the push* graph runs: maps, a merge per round and merging node, reducers. */
        public long tasks() {
            return (long) maps + (long) rounds() * mergingNodes() + reducers;
        }

        /** Objects the push* graph makes: map blocks, merged blocks, reducer outputs. */
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
     * @param outputBytes bytes the graph's final outputs hold: the input's size when the graph
     *     carries every byte through
     * @param seconds from the first submission to the last reducer's completion
     * @param slotUtilization task time over slot time in that interval
     * @param graphHeapBytes driver heap held by the whole graph's metadata with its outputs'
     *     refs held (every task's lineage is reachable then), after a full collection; -1 when
     *     not measured
     */
    public record Report(Shape shape, long tasksRun, long retried, long objectsLeft, long entriesLeft, long outputBytes,
                         double seconds, double slotUtilization, long graphHeapBytes) {

        public double tasksPerSecond() {
            return tasksRun / seconds;
        }

        /**
         * Checks that the run ran {@code tasks} attempts, none again, that its outputs hold
         * {@code outputBytes}, and that once released no node holds an object and the owner
         * tracks none.
         *
         * @throws IllegalStateException naming the first figure that differs
         */
        public Report requireAccounted(long tasks, long outputBytes) {
            require("attempts run", tasks, tasksRun);
            require("attempts retried", 0, retried);
            require("bytes of the outputs", outputBytes, this.outputBytes);
            require("objects the nodes still hold", 0, objectsLeft);
            require("objects the owner still tracks", 0, entriesLeft);
            return this;
        }

        private static void require(String figure, long expected, long actual) {
            if (expected != actual) {
                throw new IllegalStateException("the simulation lost track: " + figure + " " + actual + ", not " + expected);
            }
        }
    }

    /**
     * Runs {@code graph} on the simulated cluster of {@code shape} to the end, releases
     * everything, and reports; with {@code measureHeap}, collects garbage before and at the end
     * (outside the timed part).
     */
    public static Report run(Shape shape, Graph graph, boolean measureHeap) throws Exception {
        SimulatedBackend backend = new SimulatedBackend(shape.nodes, shape.cpusPerNode, shape.taskTime.toNanos(),
                shape.inputPartitionBytes, 0);
        long heapBefore = measureHeap ? heapAfterCollection() : 0;
        try (OwnerCluster cluster = new OwnerCluster(new ValueCodecs(Map.of(), List.of()), backend,
                EmbeddedBackend.newTag(), 0)) {
            long start = System.nanoTime();
            List<? extends ObjectRef<?>> outputs = graph.submit(cluster, shape);
            long outputBytes = 0;
            for (ObjectRef<?> out : outputs) {
                outputBytes += out.whenDone().join().byteSize();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long graphHeap = measureHeap ? heapAfterCollection() - heapBefore : -1;
            outputs.forEach(ObjectRef::release);
            ClusterStats stats = cluster.stats();
            long tasksRun = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::tasksRun).sum();
            double slotSeconds = seconds * shape.nodes * shape.cpusPerNode;
            return new Report(shape, tasksRun, stats.failures().retriedTasks(),
                    stats.nodes().stream().mapToLong(ClusterStats.NodeStats::objects).sum(), cluster.liveEntries(),
                    outputBytes, seconds, tasksRun * (shape.taskTime.toNanos() / 1e9) / slotSeconds, graphHeap);
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
