package dev.croupier.benchmarks.futures;

import dev.croupier.futures.internal.SchedulingSimulation;
import java.time.Duration;

/**
 * The Exoshuffle paper's 100 TB push* sort (50,000 maps of 2 GB, 50,000 reducers, 100 nodes of
 * 8 CPUs, rounds of 800 maps), as {@code shuffle-lib}'s PUSH_PIPELINED submits it
 * ({@link PushStarSortGraph}), scheduled by one driver over simulated nodes that move no data
 * (see {@link SchedulingSimulation}). Prints the driver's heap per task and per object, the
 * whole graph's heap, and the tasks placed per second: first with tasks that take no time (the
 * driver's ceiling), then with each task time given, where the slot utilization says whether
 * the driver kept the 800 slots busy. 2-second tasks need 400 tasks/s; tenfold margin is
 * 4,000/s, which 0.2-second tasks ask for.
 *
 * <pre>
 * java -Xmx8g -cp benchmarks/target/benchmarks.jar \
 *     dev.croupier.benchmarks.futures.SchedulingSimulationBenchmark [divisor = 1] [task ms ... = 200]
 * </pre>
 * A divisor divides the maps, the reducers and the nodes (a quick look at a smaller graph).
 */
public final class SchedulingSimulationBenchmark {

    private SchedulingSimulationBenchmark() {}

    public static void main(String[] args) throws Exception {
        int divisor = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        SchedulingSimulation.HeapCost cost = SchedulingSimulation.HeapCost.measure(200_000);
        System.out.printf("driver heap: %.0f bytes per task (with one argument), %.0f bytes per object%n",
                cost.bytesPerTask(), cost.bytesPerObject());
        SchedulingSimulation.Shape paper = SchedulingSimulation.Shape.sort100TB(Duration.ZERO);
        int nodes = Math.max(1, paper.nodes() / divisor);
        int times = Math.max(1, args.length - 1);
        for (int i = 0; i <= times; i++) {
            Duration task = i == 0 ? Duration.ZERO : Duration.ofMillis(args.length > i ? Long.parseLong(args[i]) : 200);
            SchedulingSimulation.Shape shape = new SchedulingSimulation.Shape(nodes, paper.cpusPerNode(),
                    paper.maps() / divisor, paper.reducers() / divisor, nodes * paper.cpusPerNode(), task,
                    paper.inputPartitionBytes());
            SchedulingSimulation.Report r = SchedulingSimulation.run(shape, new PushStarSortGraph(), i == 0)
                    .requireAccounted(shape.tasks(), (long) shape.maps() * shape.inputPartitionBytes());
            System.out.printf("%d nodes x %d cpus, %,d maps, %,d reducers, %d rounds: %,d tasks, %,d objects;"
                            + " tasks of %d ms: %.2f s, %,.0f tasks/s, slot utilization %.2f%s%n",
                    shape.nodes(), shape.cpusPerNode(), shape.maps(), shape.reducers(), shape.rounds(), shape.tasks(),
                    shape.objects(), task.toMillis(), r.seconds(), r.tasksPerSecond(), r.slotUtilization(),
                    r.graphHeapBytes() < 0 ? "" : String.format(", whole graph's heap %.2f GiB (%.0f bytes per object)",
                            r.graphHeapBytes() / (double) (1L << 30), r.graphHeapBytes() / (double) shape.objects()));
        }
    }
}
