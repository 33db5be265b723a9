package dev.croupier.benchmarks.formats;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardReader;
import dev.croupier.formats.ShardWriter;
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
 * Streams one shard of ~100 KiB records (3 files each, WebDataset layout) through a
 * {@link ShardReader} into a {@link ShardWriter} and commits it (fsync + rename), against the
 * baseline of a plain sequential copy of the same file with the same fsync, in the same run.
 * Throughput in MB/s is {@code shardMiB / score}; the ratio of the two scores is what
 * docs/benchmarks.md reports. Content is random so the lz4 variant does real work.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g", "-Dchronicle.analytics.disable=true"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
public class TarShardBenchmark {
    /** Input shard size in MiB. */
    @Param("128")
    public int shardMiB;

    /** Shard format of input and output: tar or tar.lz4. */
    @Param({".tar", ".tar.lz4"})
    public String extension;

    private Path dir;
    private Path input;
    private Path output;
    private final byte[] chunk = new byte[64 * 1024];

    @Setup(Level.Trial)
    public void writeInput() throws IOException {
        dir = Files.createTempDirectory("croupier-tar-bench");
        input = dir.resolve("in" + extension);
        output = dir.resolve("out" + extension);
        ShardFormat format = ShardFormat.forPath(input);
        SplittableRandom random = new SplittableRandom(42);
        int[] sizes = {90 * 1024, 10 * 1024, 300};
        long target = (long) shardMiB << 20;
        byte[] content = new byte[sizes[0]];
        try (ShardWriter w = format.create(input)) {
            for (int i = 0; w.bytesWritten() < target; i++) {
                w.beginRecord(String.format("train/%08d", i), 3);
                for (int f = 0; f < 3; f++) {
                    random.nextBytes(content);
                    w.writeFile(f == 0 ? ".jpg" : f == 1 ? ".seg.png" : ".json",
                            java.nio.ByteBuffer.wrap(content, 0, sizes[f]));
                }
            }
            w.commit();
        }
    }

    @TearDown(Level.Trial)
    public void deleteFiles() throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Baseline: sequential read and write of the same bytes, fsync, rename, as the writer does. */
    @Benchmark
    public long sequentialCopy() throws IOException {
        Path tmp = dir.resolve(".copy.tmp");
        long n = 0;
        try (InputStream in = Files.newInputStream(input);
             java.io.FileOutputStream out = new java.io.FileOutputStream(tmp.toFile())) {
            for (int r = in.read(chunk); r >= 0; r = in.read(chunk)) {
                out.write(chunk, 0, r);
                n += r;
            }
            out.getFD().sync();
        }
        Files.move(tmp, output, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return n;
    }

    /** Reads every file of the shard and writes it to a new shard of the same format, streaming. */
    @Benchmark
    public long readWriteShard() throws IOException {
        ShardFormat format = ShardFormat.forPath(input);
        long n = 0;
        try (ShardReader r = format.open(input); ShardWriter w = format.create(output)) {
            while (r.nextFile()) {
                w.beginRecord(r.key(), 1);
                try (InputStream in = r.content()) {
                    w.writeFile(r.extension(), r.size(), in);
                }
                n += r.size();
            }
            w.commit();
        }
        return n;
    }

    /** Reads the shard only (no output), to separate read cost from write cost. */
    @Benchmark
    public long readShard() throws IOException {
        long n = 0;
        try (ShardReader r = ShardFormat.forPath(input).open(input)) {
            while (r.nextFile()) {
                try (InputStream in = r.content()) {
                    for (int k = in.read(chunk); k >= 0; k = in.read(chunk)) {
                        n += k;
                    }
                }
            }
        }
        return n;
    }
}
