package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;

/**
 * What a cluster of node processes costs before and after its work: the seconds of
 * {@code Cluster.builder().processes(N).start()}, of a first task on every node, and of
 * {@code close()}, for several clusters one after another, beside the same for an embedded
 * cluster of N nodes. The first cluster of processes after a build trains the nodes'
 * ahead-of-time cache, and its close includes writing it.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     dev.croupier.benchmarks.futures.ClusterStartBenchmark [nodes = 3] [clusters = 4]
 * </pre>
 */
public final class ClusterStartBenchmark {

    private ClusterStartBenchmark() {}

    public static void main(String[] args) {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int clusters = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        for (int i = 0; i < clusters; i++) {
            for (boolean processes : new boolean[] {false, true}) {
                long t0 = System.nanoTime();
                Cluster c = processes ? Cluster.builder().processes(nodes).start() : Cluster.builder().nodes(nodes).start();
                long t1 = System.nanoTime();
                long sum = 0;
                for (int n = 0; n < nodes; n++) {
                    ObjectRef<Integer> r = c.task((Integer x) -> x + 1, n).onNode(n, dev.croupier.futures.Affinity.HARD)
                            .remote();
                    sum += r.get();
                }
                long t2 = System.nanoTime();
                c.close();
                long t3 = System.nanoTime();
                if (sum != (long) nodes * (nodes + 1) / 2) {
                    throw new IllegalStateException("tasks answered " + sum);
                }
                System.out.printf("%-9s %d nodes: start %.3f s, a task on each node %.3f s, close %.3f s%n",
                        processes ? "processes" : "embedded", nodes, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9);
            }
        }
    }
}
