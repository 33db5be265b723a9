package dev.croupier.benchmarks.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import dev.croupier.shuffle.kv.Aggregate;
import dev.croupier.shuffle.kv.GroupByJob;
import dev.croupier.shuffle.kv.KvBlock;
import dev.croupier.shuffle.records.RandomShuffleJob;
import dev.croupier.shuffle.records.SortBenchmarkRecords;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The jobs besides sort, end to end on a 2-node embedded cluster (1 CPU slot each), inputs
 * already in the stores, SIMPLE strategy, 4 inputs and 4 partitions; each op runs the job and
 * waits for every output. The bound in the same run is {@code copyTasks}: one task per input
 * copying it into a fresh output, what a job that writes its data once costs at least.
 *
 * <ul>
 *   <li>{@code randomShuffle}: 4 x 16 MiB of 100-byte records (671,088 records), a full shuffle.
 *   <li>{@code groupBySum}: 4 x 16 MiB of key/value entries (16-byte keys drawn from 100,000
 *       distinct, 8-byte values), {@code Aggregate.LONG_SUM} per key.
 *   <li>{@code groupBySumPushed}: the same into 64 partitions by PUSH_PIPELINED, whose maps
 *       return a pack per node (8 map outputs in all, not 256) and whose merges fold them.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class JobBenchmark {

    static final int INPUTS = 4;
    static final long BYTES = 16L << 20;
    static final int KEY = 16;
    static final int DISTINCT_KEYS = 100_000;

    private Cluster cluster;
    private List<ObjectRef<MemorySegment>> records;
    private List<ObjectRef<MemorySegment>> pairs;

    @Setup
    public void start() {
        cluster = Cluster.builder().nodes(2).cpusPerNode(1).objectStoreBytes(1L << 30).start();
        records = new ArrayList<>();
        pairs = new ArrayList<>();
        long perInput = BYTES / 100;
        for (int i = 0; i < INPUTS; i++) {
            long first = i * perInput;
            records.add(cluster.task(() -> {
                MemorySegment out = TaskOutput.allocate(perInput * 100);
                SortBenchmarkRecords.generate(5, first, out);
                return out;
            }).remote());
            long seed = i;
            pairs.add(cluster.task(() -> keyValues(seed)).remote());
        }
        cluster.get(records);
        cluster.get(pairs);
    }

    /** 16 MiB of entries: 16-byte keys (one of 100,000), 8-byte values. */
    static MemorySegment keyValues(long seed) {
        int entries = (int) ((BYTES - 8) / KvBlock.entryBytes(KEY, 8));
        KvBlock.Builder b = new KvBlock.Builder(entries, entries * KvBlock.entryBytes(KEY, 8));
        MemorySegment key = MemorySegment.ofArray(new byte[KEY]);
        MemorySegment value = MemorySegment.ofArray(new byte[8]);
        SplittableRandom random = new SplittableRandom(seed);
        for (int e = 0; e < entries; e++) {
            long k = random.nextInt(DISTINCT_KEYS);
            key.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, k);
            key.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, ~k);
            value.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, e);
            b.add(key, 0, KEY, value, 0, 8);
        }
        return b.build();
    }

    @TearDown
    public void stop() {
        cluster.close();
    }

    @Benchmark
    public long copyTasks() {
        List<ObjectRef<MemorySegment>> copies = new ArrayList<>();
        for (ObjectRef<MemorySegment> in : records) {
            copies.add(cluster.task((MemorySegment s) -> {
                MemorySegment out = TaskOutput.allocate(s.byteSize());
                MemorySegment.copy(s, 0, out, 0, s.byteSize());
                return out;
            }, in).remote());
        }
        long bytes = 0;
        for (ObjectRef<MemorySegment> c : copies) {
            try (c) {
                bytes += c.get().byteSize();
            }
        }
        return bytes;
    }

    @Benchmark
    public long randomShuffle() {
        try (ShuffleResult<MemorySegment> r = RandomShuffleJob.builder().inputs(records).partitions(INPUTS).seed(1)
                .strategy(Strategy.SIMPLE).build().run(cluster)) {
            return r.values().stream().mapToLong(MemorySegment::byteSize).sum();
        }
    }

    @Benchmark
    public long groupBySum() {
        try (ShuffleResult<MemorySegment> r = GroupByJob.builder().inputs(pairs).aggregate(Aggregate.LONG_SUM)
                .partitions(INPUTS).strategy(Strategy.SIMPLE).build().run(cluster)) {
            return r.values().stream().mapToLong(KvBlock::entries).sum();
        }
    }

    @Benchmark
    public long groupBySumPushed() {
        try (ShuffleResult<MemorySegment> r = GroupByJob.builder().inputs(pairs).aggregate(Aggregate.LONG_SUM)
                .partitions(64).strategy(Strategy.PUSH_PIPELINED).build().run(cluster)) {
            return r.values().stream().mapToLong(KvBlock::entries).sum();
        }
    }
}
