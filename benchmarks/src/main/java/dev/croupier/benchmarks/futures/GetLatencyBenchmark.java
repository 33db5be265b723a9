package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * Latency of {@code get} on a ready 1 MiB object, as a {@code byte[]} (one copy out of the
 * store, as the heap cannot alias it) and as a {@code MemorySegment} view (no copy), next to
 * the bounds measured in the same run: one plain 1 MiB memory copy between off-heap buffers,
 * and one copy into a freshly allocated 1 MiB heap array (what a byte[] result costs at least).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class GetLatencyBenchmark {

    static final int SIZE = 1 << 20;

    private Cluster cluster;
    private ObjectRef<byte[]> bytes;
    private ObjectRef<MemorySegment> segment;
    private Arena arena;
    private MemorySegment src;
    private MemorySegment dst;

    @Setup
    public void start() {
        cluster = Cluster.builder().nodes(4).objectStoreBytes(64L << 20).start();
        bytes = cluster.put(new byte[SIZE]);
        arena = Arena.ofShared();
        src = arena.allocate(SIZE, 64);
        dst = arena.allocate(SIZE, 64);
        segment = cluster.put(src);
        bytes.get();
    }

    @TearDown
    public void stop() {
        cluster.close();
        arena.close();
    }

    @Benchmark
    public byte[] getBytes1MiB() {
        return bytes.get();
    }

    @Benchmark
    public long getSegmentView1MiB() {
        // The ref keeps its pinned view: after the first get, this is the no-copy fast path.
        return segment.get().byteSize();
    }

    @Benchmark
    public byte[] newHeapArrayCopy1MiB() {
        // What any get of a byte[] must do at least: allocate a fresh heap array and copy into it.
        return src.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    @Benchmark
    public MemorySegment memoryCopy1MiB() {
        MemorySegment.copy(src, 0, dst, 0, SIZE);
        return dst;
    }
}
