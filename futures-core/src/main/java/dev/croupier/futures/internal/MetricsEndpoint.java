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
 * Prometheus text at {@code /metrics} for a node (and whatever else the process registers), with
 * the Prometheus Java client. Every family is read at scrape time from what the node already
 * counts for {@code Control.Stats} ({@link NodeService#stats()}): nothing is counted twice.
 * Families are {@code croupier_...}, counters end in {@code _total}, and every series carries a
 * {@code node} label (the node's address). Thread-safe.
 */
public final class MetricsEndpoint implements AutoCloseable {

    private final HTTPServer server;

    private MetricsEndpoint(HTTPServer server) {
        this.server = server;
    }

    /** Serves {@code stats}' figures on {@code bind:port} (0: any free port). */
    public static MetricsEndpoint node(String bind, int port, Supplier<StatsReply> stats) {
        PrometheusRegistry registry = new PrometheusRegistry();
        CounterWithCallback.builder().name("croupier_tasks_started").help("task attempts started, by task name")
                .labelNames("node", "task").callback(cb -> {
                    StatsReply s = stats.get();
                    for (TaskCounts t : s.getTasksList()) {
                        cb.call(t.getStarted(), s.getAddress(), t.getName());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("croupier_tasks_finished").help("task attempts that completed, by task name")
                .labelNames("node", "task").callback(cb -> {
                    StatsReply s = stats.get();
                    for (TaskCounts t : s.getTasksList()) {
                        cb.call(t.getFinished(), s.getAddress(), t.getName());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("croupier_tasks_failed").help("task attempts that threw, by task name")
                .labelNames("node", "task").callback(cb -> {
                    StatsReply s = stats.get();
                    for (TaskCounts t : s.getTasksList()) {
                        cb.call(t.getFailed(), s.getAddress(), t.getName());
                    }
                }).register(registry);
        gauge(registry, stats, "croupier_tasks_queued", "attempts waiting for a CPU slot", StatsReply::getTasksQueued);
        gauge(registry, stats, "croupier_tasks_running", "attempts running", StatsReply::getTasksRunning);
        gauge(registry, stats, "croupier_store_used_bytes", "object bytes in store memory", StatsReply::getStoreUsed);
        gauge(registry, stats, "croupier_store_capacity_bytes", "store memory", StatsReply::getStoreCapacity);
        counter(registry, stats, "croupier_spilled_bytes", "object bytes written to spill files", StatsReply::getBytesSpilled);
        counter(registry, stats, "croupier_restored_bytes", "object bytes read back from spill files",
                StatsReply::getBytesRestored);
        counter(registry, stats, "croupier_fetched_bytes", "object bytes copied from other nodes",
                StatsReply::getBytesFetched);
        try {
            return new MetricsEndpoint(HTTPServer.builder().hostname(bind).port(port).registry(registry).buildAndStart());
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "cannot serve metrics on " + bind + ":" + port + ": "
                    + e.getMessage(), e);
        }
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
