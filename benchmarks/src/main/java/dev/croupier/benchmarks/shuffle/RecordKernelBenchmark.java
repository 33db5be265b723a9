package dev.croupier.benchmarks.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.records.RecordKernels;
import dev.croupier.shuffle.records.RecordLayout;
import dev.croupier.shuffle.records.SortBenchmarkRecords;
import dev.croupier.shuffle.records.Splitters;
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
 * The sort's data kernels on one 64 MiB block of Sort Benchmark records, each run as a task of a
 * one-node embedded cluster, as in a real job: its output is written into store memory
 * ({@code TaskOutput}) and sealed in place, then released. The bound measured in the same run is
 * one task that copies the same 64 MiB into a fresh output ({@code copyTask}): what any kernel
 * that writes every byte once must pay at least.
 *
 * <ul>
 *   <li>{@code partition16}: range-partition the block into 16 blocks (a map task).
 *   <li>{@code partitionMany}: the same into 64 to 256 blocks ({@link Cut}; a map task of a
 *       4 GiB sort cuts 128).
 *   <li>{@code sortSixteenBlocksOfSize}: {@code sortSixteenBlocks} for records of 100 to 1,000
 *       bytes with random 10-byte keys ({@link Sized}): up to 256 bytes they are bucketed, larger
 *       ones gathered straight.
 *   <li>{@code sortOneBlock}: sort the block (a reduce task with one input).
 *   <li>{@code sortSixteenBlocks}: sort 16 blocks of 4 MiB (a reduce task after SIMPLE).
 *   <li>{@code concatSixteenBlocks}: concatenate 16 blocks of 4 MiB (a merge task).
 *   <li>{@code generateBlock}: make 64 MiB of records ({@code sort-benchmark}'s generate task);
 *       its bound is {@code fillTask}, one task that fills a fresh 64 MiB output with one byte.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class RecordKernelBenchmark {

    static final RecordLayout LAYOUT = SortBenchmarkRecords.LAYOUT;
    static final long BYTES = (64L << 20) / 100 * 100;

    private Cluster cluster;
    private ObjectRef<MemorySegment> block;
    private List<ObjectRef<MemorySegment>> sixteen;
    private Splitters splitters;

    @Setup
    public void start() {
        cluster = Cluster.builder().nodes(1).cpusPerNode(1).objectStoreBytes(1L << 30).start();
        block = cluster.task(() -> {
            MemorySegment out = TaskOutput.allocate(BYTES);
            SortBenchmarkRecords.generate(1, 0, out);
            return out;
        }).remote();
        sixteen = new ArrayList<>();
        long each = BYTES / 100 / 16;
        for (int i = 0; i < 16; i++) {
            long first = i * each;
            sixteen.add(cluster.task(() -> {
                MemorySegment out = TaskOutput.allocate(each * 100);
                SortBenchmarkRecords.generate(2, first, out);
                return out;
            }).remote());
        }
        splitters = Splitters.fromSamples(List.of(RecordKernels.sampleKeys(LAYOUT, block.get(), 4096, 7)),
                LAYOUT.keyBytes(), 16);
        cluster.get(sixteen);
    }

    @TearDown
    public void stop() {
        cluster.close();
    }

    @Benchmark
    public long copyTask() {
        return run(cluster.task((MemorySegment in) -> {
            MemorySegment out = TaskOutput.allocate(in.byteSize());
            MemorySegment.copy(in, 0, out, 0, in.byteSize());
            return out;
        }, block).remote());
    }

    @Benchmark
    public long partition16() {
        Splitters s = splitters;
        List<ObjectRef<MemorySegment>> parts = cluster.task((MemorySegment in) -> RecordKernels.partition(LAYOUT, in, s), block)
                .<MemorySegment>numReturns(16).remote();
        long bytes = 0;
        for (ObjectRef<MemorySegment> p : parts) {
            bytes += run(p);
        }
        return bytes;
    }

    @Benchmark
    public long partitionMany(Cut cut) {
        Splitters s = cut.splitters;
        List<ObjectRef<MemorySegment>> parts = cluster.task((MemorySegment in) -> RecordKernels.partition(LAYOUT, in, s), block)
                .<MemorySegment>numReturns(cut.partitions).remote();
        long bytes = 0;
        for (ObjectRef<MemorySegment> p : parts) {
            bytes += run(p);
        }
        return bytes;
    }

    @Benchmark
    public long sortOneBlock() {
        return run(cluster.task((MemorySegment in) -> RecordKernels.sort(LAYOUT, List.of(in)), block).remote());
    }

    @Benchmark
    public long sortSixteenBlocks() {
        return run(cluster.task((List<MemorySegment> in) -> RecordKernels.sort(LAYOUT, in), ObjectRef.all(sixteen)).remote());
    }

    @Benchmark
    public long concatSixteenBlocks() {
        return run(cluster.task((List<MemorySegment> in) -> RecordKernels.concat(in), ObjectRef.all(sixteen)).remote());
    }

    @Benchmark
    public long generateBlock() {
        return run(cluster.task(() -> {
            MemorySegment out = TaskOutput.allocate(BYTES);
            SortBenchmarkRecords.generate(3, 0, out);
            return out;
        }).remote());
    }

    @Benchmark
    public long fillTask() {
        return run(cluster.task(() -> {
            MemorySegment out = TaskOutput.allocate(BYTES);
            out.fill((byte) 'A');
            return out;
        }).remote());
    }

    /** The partition count of {@link #partitionMany}, each a benchmark of its own. */
    @State(Scope.Benchmark)
    public static class Cut {
        @Param({"64", "96", "128", "256"})
        public int partitions;
        Splitters splitters;

        @Setup
        public void cut(RecordKernelBenchmark benchmark) {
            splitters = Splitters.fromSamples(
                    List.of(RecordKernels.sampleKeys(LAYOUT, benchmark.block.get(), 4096, 7)), LAYOUT.keyBytes(), partitions);
        }
    }

    @Benchmark
    public long sortSixteenBlocksOfSize(Sized sized) {
        RecordLayout layout = sized.layout;
        return run(cluster.task((List<MemorySegment> in) -> RecordKernels.sort(layout, in), ObjectRef.all(sized.sixteen))
                .remote());
    }

    /** The record size of {@link #sortSixteenBlocksOfSize}, each a benchmark of its own. */
    @State(Scope.Benchmark)
    public static class Sized {
        @Param({"100", "160", "200", "256", "320", "1000"})
        public int recordBytes;
        RecordLayout layout;
        List<ObjectRef<MemorySegment>> sixteen;

        @Setup
        public void generate(RecordKernelBenchmark benchmark) {
            layout = new RecordLayout(recordBytes, 10);
            long bytes = BYTES / 16 / recordBytes * recordBytes;
            sixteen = new ArrayList<>();
            for (int b = 0; b < 16; b++) {
                long seed = b;
                sixteen.add(benchmark.cluster.task(() -> {
                    MemorySegment block = TaskOutput.allocate(bytes);
                    SplittableRandom random = new SplittableRandom(seed);
                    for (long off = 0; off + Long.BYTES <= bytes; off += Long.BYTES) {
                        block.set(ValueLayout.JAVA_LONG_UNALIGNED, off, random.nextLong());
                    }
                    return block;
                }).remote());
            }
            benchmark.cluster.get(sixteen);
        }
    }

    private static long run(ObjectRef<MemorySegment> ref) {
        try (ref) {
            return ref.get().byteSize();
        }
    }
}
