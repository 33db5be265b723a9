package dev.croupier.futures;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A snapshot of what the cluster has run, by task name and by node, in the spirit of Ray
 * Data's {@code ds.stats()}. {@link #toString()} renders it as a table. Immutable.
 *
 * @param tasks one row per task name, in order of first submission
 * @param nodes one row per node id
 * @param failures what node losses and failed attempts cost so far
 * @param tasksWaitingForAnyNode ready tasks that prefer no node, waiting at the driver until
 *     one has room (a node holds two attempts per CPU slot; the rest wait at the driver)
 */
public record ClusterStats(List<TaskStats> tasks, List<NodeStats> nodes, Failures failures,
                           long tasksWaitingForAnyNode) {

    public ClusterStats {
        tasks = List.copyOf(tasks);
        nodes = List.copyOf(nodes);
    }

    /**
     * What failures cost the driver since the cluster started. Counters only grow, so an
     * exporter may publish them as counters.
     *
     * @param retriedTasks attempts dispatched again: their node was lost, the attempt failed
     *     with a retried exception, or an argument it needed was gone
     * @param rebuiltObjects objects made again from lineage because no copy was left
     * @param nodesLost node incarnations the driver lost (a crash, a broken stream, missed
     *     heartbeats, or {@link Cluster#killNode})
     * @param detectionSeconds per lost node, in order of detection: seconds from the last word
     *     the driver had from it to the moment it was declared dead (0 for {@code killNode},
     *     which knows the instant); at most one heartbeat period more than the true time from
     *     the loss
     */
    public record Failures(long retriedTasks, long rebuiltObjects, int nodesLost, List<Double> detectionSeconds) {
        public Failures {
            detectionSeconds = List.copyOf(detectionSeconds);
        }
    }

    /**
     * Executions of the tasks of one name. Times are nanoseconds; an execution that was
     * retried counts once per attempt that ran; {@code retried} counts the attempts run again
     * elsewhere after their node was lost.
     */
    public record TaskStats(
            String name,
            long count,
            long failed,
            long minWallNanos,
            long meanWallNanos,
            long maxWallNanos,
            long minCpuNanos,
            long meanCpuNanos,
            long maxCpuNanos,
            long meanQueueNanos,
            long bytesIn,
            long bytesOut,
            Map<Integer, Long> tasksPerNode,
            long retried) {
        public TaskStats {
            tasksPerNode = Map.copyOf(tasksPerNode);
        }
    }

    /**
     * One node: whether it is alive, what it ran, what its object store holds, and how many
     * ready tasks wait at the driver for room on it ({@code tasksWaiting}: those with affinity
     * to it, or whose arguments are there).
     */
    public record NodeStats(
            int nodeId,
            boolean alive,
            long tasksRun,
            long objects,
            long bytesInMemory,
            long bytesSpilled,
            long bytesRestored,
            long bytesFetched,
            long tasksWaiting) {}

    /** Total executions of all task names. */
    public long totalTasks() {
        return tasks.stream().mapToLong(TaskStats::count).sum();
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-24s %8s %6s %27s %27s %9s %10s %10s  %s%n",
                "task", "count", "failed", "wall min/mean/max (ms)", "cpu min/mean/max (ms)",
                "queue(ms)", "in", "out", "per node"));
        for (TaskStats t : tasks) {
            out.append(String.format(Locale.ROOT, "%-24s %8d %6d %27s %27s %9.3f %10s %10s  %s%n",
                    truncate(t.name(), 24), t.count(), t.failed(),
                    triple(t.minWallNanos(), t.meanWallNanos(), t.maxWallNanos()),
                    triple(t.minCpuNanos(), t.meanCpuNanos(), t.maxCpuNanos()),
                    t.meanQueueNanos() / 1e6, bytes(t.bytesIn()), bytes(t.bytesOut()),
                    new java.util.TreeMap<>(t.tasksPerNode())));
        }
        out.append(String.format(Locale.ROOT, "%n%-6s %6s %10s %9s %10s %10s %10s %10s %8s%n",
                "node", "alive", "tasks", "objects", "memory", "spilled", "restored", "fetched", "waiting"));
        for (NodeStats n : nodes) {
            out.append(String.format(Locale.ROOT, "%-6d %6s %10d %9d %10s %10s %10s %10s %8d%n",
                    n.nodeId(), n.alive() ? "yes" : "no", n.tasksRun(), n.objects(),
                    bytes(n.bytesInMemory()), bytes(n.bytesSpilled()), bytes(n.bytesRestored()),
                    bytes(n.bytesFetched()), n.tasksWaiting()));
        }
        out.append(String.format(Locale.ROOT, "tasks waiting for any node %d%n", tasksWaitingForAnyNode));
        out.append(String.format(Locale.ROOT, "%nretried tasks %d, rebuilt objects %d, nodes lost %d, detection (s) %s%n",
                failures.retriedTasks(), failures.rebuiltObjects(), failures.nodesLost(),
                failures.detectionSeconds()));
        return out.toString();
    }

    private static String triple(long min, long mean, long max) {
        return String.format(Locale.ROOT, "%.3f/%.3f/%.3f", min / 1e6, mean / 1e6, max / 1e6);
    }

    private static String truncate(String s, int width) {
        return s.length() <= width ? s : s.substring(0, width - 1) + "~";
    }

    /** Bytes as B, KiB, MiB or GiB with one decimal. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
