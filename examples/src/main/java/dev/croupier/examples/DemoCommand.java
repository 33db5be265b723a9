package dev.croupier.examples;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code croupier demo}: a runtime demo on an embedded cluster. Thousands of sampling tasks
 * estimate pi and a tree of sum tasks (refs as arguments) combines them; then a burst of no-op
 * tasks measures scheduling throughput. Prints the result and {@code cluster.stats()}.
 */
final class DemoCommand implements CroupierCli.Command {

    private static final int FAN_IN = 8;

    @Override
    public int run(String[] args) {
        if (List.of(args).contains("--help")) {
            System.out.println("usage: croupier demo [--nodes N] [--tasks T] [--samples S]");
            System.out.println("  Estimates pi with T sampling tasks of S samples on N embedded nodes, then runs");
            System.out.println("  T no-op tasks, and prints throughput and the cluster's per-task stats.");
            return 0;
        }
        Options o = Options.parse("demo", args, Set.of(), Set.of("nodes", "tasks", "samples"));
        int nodes = o.integer("nodes", 4, 1, 1024);
        int tasks = o.integer("tasks", 4000, 1, 10_000_000);
        int samples = o.integer("samples", 20_000, 1, 1 << 30);

        try (Cluster cluster = Cluster.builder().nodes(nodes).objectStoreBytes(64L << 20).start()) {
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
            System.out.printf(Locale.ROOT, "pi ~ %.6f from %,d samples in %,d tasks on %d nodes: %.2f s%n",
                    pi, (long) tasks * samples, tasks, nodes, seconds);

            long t1 = System.nanoTime();
            List<ObjectRef<Integer>> noops = new ArrayList<>(tasks);
            for (int i = 0; i < tasks; i++) {
                noops.add(cluster.task(() -> 0).name("no-op").remote());
            }
            cluster.get(noops);
            double noopSeconds = (System.nanoTime() - t1) / 1e9;
            System.out.printf(Locale.ROOT, "%,d no-op tasks: %.3f s, %,.0f tasks/s%n%n",
                    tasks, noopSeconds, tasks / noopSeconds);
            noops.forEach(ObjectRef::release);
            level.getFirst().release();
            System.out.print(cluster.stats());
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
