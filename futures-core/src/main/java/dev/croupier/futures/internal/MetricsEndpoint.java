package dev.croupier.futures.internal;

import dev.croupier.futures.ClusterStats;
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

    private static final String[] NODE = {"node"};
    private static final String[] NODE_TASK = {"node", "task"};

    /** Serves {@code stats}' figures on {@code bind:port} (0: any free port). */
    public static MetricsEndpoint node(String bind, int port, Supplier<StatsReply> stats) {
        PrometheusRegistry registry = new PrometheusRegistry();
        family(registry, stats, true, "croupier_tasks_started", "task attempts started, by task name", NODE_TASK,
                (s, row) -> s.getTasksList().forEach(t -> row.add(t.getStarted(), s.getAddress(), t.getName())));
        family(registry, stats, true, "croupier_tasks_finished", "task attempts that completed, by task name", NODE_TASK,
                (s, row) -> s.getTasksList().forEach(t -> row.add(t.getFinished(), s.getAddress(), t.getName())));
        family(registry, stats, true, "croupier_tasks_failed", "task attempts that threw, by task name", NODE_TASK,
                (s, row) -> s.getTasksList().forEach(t -> row.add(t.getFailed(), s.getAddress(), t.getName())));
        family(registry, stats, false, "croupier_tasks_queued", "attempts waiting for a CPU slot", NODE,
                (s, row) -> row.add(s.getTasksQueued(), s.getAddress()));
        family(registry, stats, false, "croupier_tasks_running", "attempts running", NODE,
                (s, row) -> row.add(s.getTasksRunning(), s.getAddress()));
        family(registry, stats, false, "croupier_store_used_bytes", "object bytes in store memory", NODE,
                (s, row) -> row.add(s.getStoreUsed(), s.getAddress()));
        family(registry, stats, false, "croupier_store_capacity_bytes", "store memory", NODE,
                (s, row) -> row.add(s.getStoreCapacity(), s.getAddress()));
        family(registry, stats, true, "croupier_spilled_bytes", "object bytes written to spill files", NODE,
                (s, row) -> row.add(s.getBytesSpilled(), s.getAddress()));
        family(registry, stats, true, "croupier_restored_bytes", "object bytes read back from spill files", NODE,
                (s, row) -> row.add(s.getBytesRestored(), s.getAddress()));
        family(registry, stats, true, "croupier_fetched_bytes", "object bytes copied from other nodes", NODE,
                (s, row) -> row.add(s.getBytesFetched(), s.getAddress()));
        return start(registry, bind, port);
    }

    /**
     * Serves a driver's figures on {@code bind:port}: what only the owner knows (retries, rebuilt
     * objects, lost nodes; label {@code node="driver"}), tasks by name and node (finished and
     * failed attempts), and each node's store, spills and fetches as the owner last heard them
     * (label {@code node} = the node's id).
     */
    public static MetricsEndpoint driver(String bind, int port, Supplier<ClusterStats> stats) {
        PrometheusRegistry registry = new PrometheusRegistry();
        family(registry, stats, true, "croupier_tasks_finished", "task attempts that ran, by node and task name",
                NODE_TASK, (s, row) -> s.tasks().forEach(t -> t.tasksPerNode().forEach(
                        (node, n) -> row.add(n, Integer.toString(node), t.name()))));
        family(registry, stats, true, "croupier_tasks_failed", "task attempts that threw, by task name", NODE_TASK,
                (s, row) -> s.tasks().forEach(t -> row.add(t.failed(), "driver", t.name())));
        family(registry, stats, true, "croupier_tasks_retried", "task attempts run again after a loss, by task name",
                NODE_TASK, (s, row) -> s.tasks().forEach(t -> row.add(t.retried(), "driver", t.name())));
        family(registry, stats, true, "croupier_objects_rebuilt", "lost objects made again from lineage", NODE,
                (s, row) -> row.add(s.failures().rebuiltObjects(), "driver"));
        family(registry, stats, true, "croupier_nodes_lost", "node incarnations declared dead", NODE,
                (s, row) -> row.add(s.failures().nodesLost(), "driver"));
        family(registry, stats, false, "croupier_store_used_bytes", "object bytes in the node's store memory", NODE,
                (s, row) -> s.nodes().forEach(n -> row.add(n.bytesInMemory(), Integer.toString(n.nodeId()))));
        family(registry, stats, true, "croupier_spilled_bytes", "object bytes the node wrote to spill files", NODE,
                (s, row) -> s.nodes().forEach(n -> row.add(n.bytesSpilled(), Integer.toString(n.nodeId()))));
        family(registry, stats, true, "croupier_restored_bytes", "object bytes the node read back from spill files",
                NODE, (s, row) -> s.nodes().forEach(n -> row.add(n.bytesRestored(), Integer.toString(n.nodeId()))));
        family(registry, stats, true, "croupier_fetched_bytes", "object bytes the node copied from other nodes", NODE,
                (s, row) -> s.nodes().forEach(n -> row.add(n.bytesFetched(), Integer.toString(n.nodeId()))));
        family(registry, stats, false, "croupier_tasks_waiting",
                "ready tasks waiting at the driver for room on the node (node=\"any\": on any node)", NODE,
                (s, row) -> {
                    s.nodes().forEach(n -> row.add(n.tasksWaiting(), Integer.toString(n.nodeId())));
                    row.add(s.tasksWaitingForAnyNode(), "any");
                });
        return start(registry, bind, port);
    }

    /** One series of a family: its value and its labels' values. */
    @FunctionalInterface
    private interface Row {
        void add(long value, String... labels);
    }

    /**
     * A family read at scrape time: {@code rows} gives its series from one snapshot of
     * {@code stats}. A counter's name gets {@code _total} from the client.
     */
    private static <S> void family(PrometheusRegistry registry, Supplier<S> stats, boolean counter, String name,
                                   String help, String[] labels, java.util.function.BiConsumer<S, Row> rows) {
        if (counter) {
            CounterWithCallback.builder().name(name).help(help).labelNames(labels)
                    .callback(cb -> rows.accept(stats.get(), (v, l) -> cb.call(v, l))).register(registry);
        } else {
            GaugeWithCallback.builder().name(name).help(help).labelNames(labels)
                    .callback(cb -> rows.accept(stats.get(), (v, l) -> cb.call(v, l))).register(registry);
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

    /** The port served. */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }
}
