package dev.croupier.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code croupier demo}: a runtime demo. Thousands of sampling tasks estimate pi and a tree of
 * sum tasks (refs as arguments) combines them; then a burst of no-op tasks from this one driver
 * measures scheduling throughput, the figure that tells an embedded cluster from node processes
 * ({@code --processes 2}). Prints the result and {@code cluster.stats()}, or one JSON object.
 */
final class DemoCommand implements CroupierCli.Command {

    private static final int FAN_IN = 8;

    private static final String USAGE = """
            usage: croupier demo [options]
              Estimates pi with T sampling tasks of S samples, then runs T no-op tasks from this driver,
              and prints throughput and the cluster's per-task stats.
              --tasks T             sampling tasks, and as many no-op tasks (default 4000)
              --samples S           samples per sampling task (default 20000)
              --json                print one JSON object (pi, times, noop_tasks_per_s) instead of text
            """ + ClusterOptions.usage(4, "64m");

    @Override
    public int run(String[] args) throws IOException {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("demo", args, Set.of("json"), ClusterOptions.valuedWith("tasks", "samples"));
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        int tasks = o.integer("tasks", 4000, 1, 10_000_000);
        int samples = o.integer("samples", 20_000, 1, 1 << 30);
        ClusterOptions clusterOptions = ClusterOptions.parse(o, 4, nodes -> 64L << 20);
        boolean json = o.flag("json");

        Map<String, Object> report = new LinkedHashMap<>();
        try (Cluster cluster = clusterOptions.start()) {
            int nodes = cluster.aliveNodes().size();
            long t0 = System.nanoTime();
            List<ObjectRef<Long>> level = new ArrayList<>(tasks);
            for (int i = 0; i < tasks; i++) {
                level.add(cluster.task(DemoCommand::hits, (long) i, samples).name("sample").remote());
            }
            while (level.size() > 1) {
                List<ObjectRef<Long>> next = new ArrayList<>();
                for (int i = 0; i < level.size(); i += FAN_IN) {
                    List<ObjectRef<Long>> group = level.subList(i, Math.min(level.size(), i + FAN_IN));
                    next.add(cluster.task(DemoCommand::sum, ObjectRef.all(group)).name("sum").remote());
                }
                level.forEach(ObjectRef::release);
                level = next;
            }
            long hits = level.getFirst().get();
            double seconds = (System.nanoTime() - t0) / 1e9;
            double pi = 4.0 * hits / ((double) tasks * samples);
            if (!json) {
                System.out.printf(Locale.ROOT, "pi ~ %.6f from %,d samples in %,d tasks on %d nodes: %.2f s%n",
                        pi, (long) tasks * samples, tasks, nodes, seconds);
            }

            long t1 = System.nanoTime();
            List<ObjectRef<Integer>> noops = new ArrayList<>(tasks);
            for (int i = 0; i < tasks; i++) {
                noops.add(cluster.task(() -> 0).name("no-op").remote());
            }
            cluster.get(noops);
            double noopSeconds = (System.nanoTime() - t1) / 1e9;
            noops.forEach(ObjectRef::release);
            level.getFirst().release();
            if (json) {
                report.put("nodes", nodes);
                report.put("tasks", tasks);
                report.put("samples", samples);
                report.put("pi", pi);
                report.put("pi_seconds", seconds);
                report.put("noop_tasks", tasks);
                report.put("noop_seconds", noopSeconds);
                report.put("noop_tasks_per_s", tasks / noopSeconds);
            } else {
                System.out.printf(Locale.ROOT, "%,d no-op tasks: %.3f s, %,.0f tasks/s%n%n",
                        tasks, noopSeconds, tasks / noopSeconds);
                System.out.print(cluster.stats());
            }
        }
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report));
        }
        return 0;
    }

    static long hits(long seed, int samples) {
        SplittableRandom random = new SplittableRandom(seed);
        long inside = 0;
        for (int i = 0; i < samples; i++) {
            double x = random.nextDouble();
            double y = random.nextDouble();
            if (x * x + y * y <= 1.0) {
                inside++;
            }
        }
        return inside;
    }

    static long sum(List<Long> parts) {
        long total = 0;
        for (long p : parts) {
            total += p;
        }
        return total;
    }
}
