package dev.croupier.benchmarks.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.records.RecordKernels;
import dev.croupier.shuffle.records.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A reducer's sort of 16 blocks, 64 MiB in all, by record size, as a task of a one-node
 * embedded cluster (as {@link RecordKernelBenchmark}'s sorts): records of up to 192 bytes are
 * bucketed first (a staged scatter into 256 buckets, each then sorted in cache), larger ones
 * gathered straight in sorted order. Random 10-byte keys.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class RecordSizeSortBenchmark {

    @Param({"100", "128", "200", "256", "600", "1000"})
    public int recordBytes;

    private Cluster cluster;
    private List<ObjectRef<MemorySegment>> sixteen;
    private RecordLayout layout;

    @Setup
    public void start() {
        cluster = Cluster.builder().nodes(1).cpusPerNode(1).objectStoreBytes(1L << 30).start();
        layout = new RecordLayout(recordBytes, 10);
        long bytes = (4L << 20) / recordBytes * recordBytes;
        sixteen = new ArrayList<>();
        for (int b = 0; b < 16; b++) {
            long seed = b;
            sixteen.add(cluster.task(() -> {
                MemorySegment block = TaskOutput.allocate(bytes);
                SplittableRandom random = new SplittableRandom(seed);
                for (long off = 0; off + Long.BYTES <= bytes; off += Long.BYTES) {
                    block.set(ValueLayout.JAVA_LONG_UNALIGNED, off, random.nextLong());
                }
                return block;
            }).remote());
        }
        cluster.get(sixteen);
    }

    @TearDown
    public void stop() {
        cluster.close();
    }

    @Benchmark
    public long sortSixteenBlocks() {
        RecordLayout l = layout;
        try (ObjectRef<MemorySegment> sorted = cluster.task((List<MemorySegment> in) -> RecordKernels.sort(l, in),
                ObjectRef.all(sixteen)).remote()) {
            return sorted.get().byteSize();
        }
    }
}
