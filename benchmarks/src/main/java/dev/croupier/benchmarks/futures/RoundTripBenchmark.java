package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import java.util.Arrays;

/**
 * The latency of one task at a time: submit a no-op task, wait for its result, then the next,
 * alternating between the nodes, on 2 embedded nodes and on 2 node processes. Rounds follow one
 * another in one cluster, so how a fresh node process warms up (its JIT compiling gRPC and the
 * runtime) shows round by round, where a throughput benchmark's warm-up hides it.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     dev.croupier.benchmarks.futures.RoundTripBenchmark [rounds = 12] [tasks per round = 500]
 * </pre>
 */
public final class RoundTripBenchmark {

    private RoundTripBenchmark() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        int tasks = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        for (boolean processes : new boolean[] {false, true}) {
            Cluster.Builder b = Cluster.builder().cpusPerNode(1).objectStoreBytes(256L << 20);
            try (Cluster c = processes ? b.processes(2).start() : b.nodes(2).start()) {
                for (int round = 0; round < rounds; round++) {
                    long[] nanos = new long[tasks];
                    for (int i = 0; i < tasks; i++) {
                        long start = System.nanoTime();
                        int answer = c.task((Integer x) -> x + 1, i).onNode(i % 2, Affinity.HARD).remote().get();
                        nanos[i] = System.nanoTime() - start;
                        if (answer != i + 1) {
                            throw new IllegalStateException("task " + i + " answered " + answer);
                        }
                    }
                    Arrays.sort(nanos);
                    System.out.printf("%-9s round %2d: median %6.0f us, p90 %6.0f us, max %7.0f us%n",
                            processes ? "processes" : "embedded", round, nanos[tasks / 2] / 1e3,
                            nanos[tasks * 9 / 10] / 1e3, nanos[tasks - 1] / 1e3);
                }
            }
        }
    }
}
