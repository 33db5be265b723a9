package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.wire.StatsReply;
import dev.croupier.futures.wire.TaskCounts;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.function.Supplier;

/**
 * Prometheus text at {@code /metrics} for a node or a driver, with the Prometheus Java client.
 * Every family is read at scrape time from what is already counted: a node's
 * {@code Control.Stats} ({@link NodeService#stats()}), a driver's {@code ClusterStats}; nothing
 * is counted twice.
 * Families are {@code croupier_...}, counters end in {@code _total}, and every series carries a
 * {@code node} label. Thread-safe.
 */
public final class MetricsEndpoint implements AutoCloseable {

    private final HTTPServer server;

    private MetricsEndpoint(HTTPServer server) {
        this.server = server;
    }

    /** Serves {@code stats}' figures on {@code bind:port} (0: any free port). */
    public static MetricsEndpoint node(String bind, int port, Supplier<StatsReply> stats) {
        PrometheusRegistry registry = new PrometheusRegistry();
        taskCounter(registry, stats, "croupier_tasks_started", "task attempts started, by task name",
                TaskCounts::getStarted);
        taskCounter(registry, stats, "croupier_tasks_finished", "task attempts that completed, by task name",
                TaskCounts::getFinished);
        taskCounter(registry, stats, "croupier_tasks_failed", "task attempts that threw, by task name",
                TaskCounts::getFailed);
        gauge(registry, stats, "croupier_tasks_queued", "attempts waiting for a CPU slot", StatsReply::getTasksQueued);
        gauge(registry, stats, "croupier_tasks_running", "attempts running", StatsReply::getTasksRunning);
        gauge(registry, stats, "croupier_store_used_bytes", "object bytes in store memory", StatsReply::getStoreUsed);
        gauge(registry, stats, "croupier_store_capacity_bytes", "store memory", StatsReply::getStoreCapacity);
        counter(registry, stats, "croupier_spilled_bytes", "object bytes written to spill files", StatsReply::getBytesSpilled);
        counter(registry, stats, "croupier_restored_bytes", "object bytes read back from spill files",
                StatsReply::getBytesRestored);
        counter(registry, stats, "croupier_fetched_bytes", "object bytes copied from other nodes",
                StatsReply::getBytesFetched);
        return start(registry, bind, port);
    }

    /**
     * Serves a driver's figures on {@code bind:port}: what only the owner knows (retries, rebuilt
     * objects, lost nodes; label {@code node="driver"}), tasks by name and node (finished and
     * failed attempts), and each node's store, spills and fetches as the owner last heard them
     * (label {@code node} = the node's id).
     */
    public static MetricsEndpoint driver(String bind, int port, Supplier<dev.croupier.futures.ClusterStats> stats) {
        PrometheusRegistry registry = new PrometheusRegistry();
        CounterWithCallback.builder().name("croupier_tasks_finished").help("task attempts that ran, by node and task name")
                .labelNames("node", "task").callback(cb -> {
                    for (var t : stats.get().tasks()) {
                        t.tasksPerNode().forEach((node, n) -> cb.call(n, Integer.toString(node), t.name()));
                    }
                }).register(registry);
        CounterWithCallback.builder().name("croupier_tasks_failed").help("task attempts that threw, by task name")
                .labelNames("node", "task").callback(cb -> {
                    for (var t : stats.get().tasks()) {
                        cb.call(t.failed(), "driver", t.name());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("croupier_tasks_retried").help("task attempts run again after a loss, by task name")
                .labelNames("node", "task").callback(cb -> {
                    for (var t : stats.get().tasks()) {
                        cb.call(t.retried(), "driver", t.name());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("croupier_objects_rebuilt").help("lost objects made again from lineage")
                .labelNames("node").callback(cb -> cb.call(stats.get().failures().rebuiltObjects(), "driver"))
                .register(registry);
        CounterWithCallback.builder().name("croupier_nodes_lost").help("node incarnations declared dead")
                .labelNames("node").callback(cb -> cb.call(stats.get().failures().nodesLost(), "driver"))
                .register(registry);
        perNode(registry, stats, "croupier_store_used_bytes", "object bytes in the node's store memory", false,
                dev.croupier.futures.ClusterStats.NodeStats::bytesInMemory);
        perNode(registry, stats, "croupier_spilled_bytes", "object bytes the node wrote to spill files", true,
                dev.croupier.futures.ClusterStats.NodeStats::bytesSpilled);
        perNode(registry, stats, "croupier_restored_bytes", "object bytes the node read back from spill files", true,
                dev.croupier.futures.ClusterStats.NodeStats::bytesRestored);
        perNode(registry, stats, "croupier_fetched_bytes", "object bytes the node copied from other nodes", true,
                dev.croupier.futures.ClusterStats.NodeStats::bytesFetched);
        return start(registry, bind, port);
    }

    private static void perNode(PrometheusRegistry registry, Supplier<dev.croupier.futures.ClusterStats> stats,
                                String name, String help, boolean counter,
                                java.util.function.ToLongFunction<dev.croupier.futures.ClusterStats.NodeStats> value) {
        if (counter) {
            CounterWithCallback.builder().name(name).help(help).labelNames("node").callback(cb -> {
                for (var n : stats.get().nodes()) {
                    cb.call(value.applyAsLong(n), Integer.toString(n.nodeId()));
                }
            }).register(registry);
        } else {
            GaugeWithCallback.builder().name(name).help(help).labelNames("node").callback(cb -> {
                for (var n : stats.get().nodes()) {
                    cb.call(value.applyAsLong(n), Integer.toString(n.nodeId()));
                }
            }).register(registry);
        }
    }

    private static MetricsEndpoint start(PrometheusRegistry registry, String bind, int port) {
        try {
            return new MetricsEndpoint(HTTPServer.builder().hostname(bind).port(port).registry(registry).buildAndStart());
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "cannot serve metrics on " + bind + ":" + port + ": "
                    + e.getMessage(), e);
        }
    }

    private static void taskCounter(PrometheusRegistry registry, Supplier<StatsReply> stats, String name, String help,
                                    java.util.function.ToLongFunction<TaskCounts> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames("node", "task").callback(cb -> {
            StatsReply s = stats.get();
            for (TaskCounts t : s.getTasksList()) {
                cb.call(value.applyAsLong(t), s.getAddress(), t.getName());
            }
        }).register(registry);
    }

    private static void gauge(PrometheusRegistry registry, Supplier<StatsReply> stats, String name, String help,
                              java.util.function.ToLongFunction<StatsReply> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("node").callback(cb -> {
            StatsReply s = stats.get();
            cb.call(value.applyAsLong(s), s.getAddress());
        }).register(registry);
    }

    private static void counter(PrometheusRegistry registry, Supplier<StatsReply> stats, String name, String help,
                                java.util.function.ToLongFunction<StatsReply> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames("node").callback(cb -> {
            StatsReply s = stats.get();
            cb.call(value.applyAsLong(s), s.getAddress());
        }).register(registry);
    }

    /** The port served. */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }
}
