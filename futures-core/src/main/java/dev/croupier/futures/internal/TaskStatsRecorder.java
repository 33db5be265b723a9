package dev.croupier.futures.internal;

import dev.croupier.futures.ClusterStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Accumulates per-task-name statistics: one small synchronized accumulator per name, so tasks
 * of different names never contend. Thread-safe.
 */
final class TaskStatsRecorder {

    private final ConcurrentHashMap<String, Accumulator> byName = new ConcurrentHashMap<>();
    private final AtomicLong order = new AtomicLong();

    void record(String name, int nodeId, boolean failed, long queueNanos, long wallNanos,
                long cpuNanos, long bytesIn, long bytesOut) {
        Accumulator acc = byName.get(name);
        if (acc == null) {
            acc = byName.computeIfAbsent(name, n -> new Accumulator(n, order.getAndIncrement()));
        }
        acc.add(nodeId, failed, queueNanos, wallNanos, cpuNanos, bytesIn, bytesOut);
    }

    /** An attempt of task {@code name} that is run again, elsewhere, after its node was lost. */
    void retried(String name) {
        Accumulator acc = byName.get(name);
        if (acc == null) {
            acc = byName.computeIfAbsent(name, n -> new Accumulator(n, order.getAndIncrement()));
        }
        acc.retry();
    }

    List<ClusterStats.TaskStats> snapshot() {
        List<Accumulator> all = new ArrayList<>(byName.values());
        all.sort(Comparator.comparingLong(a -> a.order));
        List<ClusterStats.TaskStats> out = new ArrayList<>(all.size());
        for (Accumulator a : all) {
            out.add(a.snapshot());
        }
        return out;
    }

    private static final class Accumulator {
        final String name;
        final long order;
        long count;
        long failed;
        long retried;
        long minWall = Long.MAX_VALUE;
        long maxWall;
        long sumWall;
        long minCpu = Long.MAX_VALUE;
        long maxCpu;
        long sumCpu;
        long sumQueue;
        long bytesIn;
        long bytesOut;
        final Map<Integer, Long> perNode = new HashMap<>();

        Accumulator(String name, long order) {
            this.name = name;
            this.order = order;
        }

        synchronized void add(int nodeId, boolean fail, long queue, long wall, long cpu, long in, long out) {
            count++;
            if (fail) {
                failed++;
            }
            minWall = Math.min(minWall, wall);
            maxWall = Math.max(maxWall, wall);
            sumWall += wall;
            minCpu = Math.min(minCpu, cpu);
            maxCpu = Math.max(maxCpu, cpu);
            sumCpu += cpu;
            sumQueue += queue;
            bytesIn += in;
            bytesOut += out;
            perNode.merge(nodeId, 1L, Long::sum);
        }

        synchronized void retry() {
            retried++;
        }

        synchronized ClusterStats.TaskStats snapshot() {
            long n = Math.max(1, count);
            return new ClusterStats.TaskStats(name, count, failed,
                    count == 0 ? 0 : minWall, sumWall / n, maxWall,
                    count == 0 ? 0 : minCpu, sumCpu / n, maxCpu,
                    sumQueue / n, bytesIn, bytesOut, perNode, retried);
        }
    }
}
