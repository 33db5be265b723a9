package dev.croupier.benchmarks.objectstore;

import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.PinnedObject;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * Object store put and get throughput against a plain memory copy of the same bytes in the same
 * run. {@code put} is create + copy in + seal + delete (the delete keeps the store from
 * spilling, so this is the in-memory path); {@code get} is pin + copy the whole view out +
 * unpin, so both move exactly {@code size} bytes like {@code memcpy}. Ratio = memcpy time per
 * op / store time per op.
 *
 * <pre>
 * flock /tmp/croupier-bench.lock java -jar benchmarks/target/benchmarks.jar PutGetBenchmark \
 *     -jvmArgsAppend "$(cat examples/target/classes/croupier-jvm.flags)"
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Dchronicle.analytics.disable=true", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
public class PutGetBenchmark {

    @Param({"1024", "102400", "1048576", "67108864"})
    public long size;

    private ObjectStore store;
    private Arena arena;
    private MemorySegment src;
    private MemorySegment dst;
    private ObjectId resident;
    private long next;

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
        store = ObjectStore.builder().name("jmh-put-get").capacityBytes(1L << 30).build();
        arena = Arena.ofShared();
        src = arena.allocate(size, 64);
        dst = arena.allocate(size, 64);
        for (long i = 0; i < size; i += 4096) {
            src.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        dst.fill((byte) 1);
        resident = store.put(ObjectId.of(1, 0), src);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        store.close();
        arena.close();
    }

    @Benchmark
    public MemorySegment memcpy() {
        MemorySegment.copy(src, 0, dst, 0, size);
        return dst;
    }

    @Benchmark
    public boolean put() throws InterruptedException {
        ObjectId id = ObjectId.of(2, next++);
        store.put(id, src);
        return store.delete(id);
    }

    @Benchmark
    public MemorySegment get() throws InterruptedException {
        try (PinnedObject pinned = store.get(resident)) {
            MemorySegment.copy(pinned.segment(), 0, dst, 0, size);
        }
        return dst;
    }
}
