package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * End-to-end throughput of tiny tasks: submit a batch of no-op tasks from one driver thread,
 * then get every result. Counts tasks per second. The ref variant makes every task read one
 * object, so dependency tracking is on the path. {@code backend}: {@code embedded} (4 nodes in
 * this JVM) or {@code processes} (2 node processes on this machine, over gRPC).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class TaskThroughputBenchmark {

    static final int BATCH = 10_000;

    @Param({"embedded", "processes"})
    String backend;

    private Cluster cluster;
    private ObjectRef<Integer> seed;

    @Setup
    public void start() {
        Cluster.Builder b = Cluster.builder().objectStoreBytes(64L << 20);
        cluster = switch (backend) {
            case "embedded" -> b.nodes(4).start();
            case "processes" -> b.processes(2).start();
            default -> throw new IllegalArgumentException("backend = " + backend + "; allowed: embedded, processes");
        };
        seed = cluster.put(1);
    }

    @TearDown
    public void stop() {
        cluster.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int noOpTasks() {
        List<ObjectRef<Integer>> refs = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            refs.add(cluster.task(() -> 0).name("no-op").remote());
        }
        return drain(refs);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int tasksWithARefArgument() {
        List<ObjectRef<Integer>> refs = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            refs.add(cluster.task((Integer x) -> x, seed).name("echo").remote());
        }
        return drain(refs);
    }

    private static int drain(List<ObjectRef<Integer>> refs) {
        int sum = 0;
        for (ObjectRef<Integer> r : refs) {
            sum += r.get();
            r.release();
        }
        return sum;
    }
}
