package dev.croupier.nvme;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invariants of the sampler over random shapes: row size, row count, chunk size, threads,
 * batch sizes and memory limit. Files live in the JVM's temp directory (a disk on the build
 * machine, so the O_DIRECT path is the one exercised).
 */
class RowSamplerProperties {

    private static Path dir;

    @BeforeContainer
    static void makeDir() throws IOException {
        dir = Files.createTempDirectory("croupier-nvme-props-");
    }

    @AfterContainer
    static void removeDir() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    record Shape(int rowSize, int rowCount, int chunkBytes, int threads, int maxBatch, long memoryLimit, long seed) {}

    @Provide
    Arbitrary<Shape> shapes() {
        Arbitrary<Integer> rowSize = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(2, 200)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(201, 9000)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(512, 4096, 8192)));
        return Combinators.combine(rowSize, Arbitraries.integers().between(1, 3000),
                        Arbitraries.integers().between(1, 70_000), Arbitraries.integers().between(1, 6),
                        Arbitraries.integers().between(1, 300), Arbitraries.longs().between(1, 24L << 20).withDistribution(net.jqwik.api.RandomDistribution.uniform()),
                        Arbitraries.longs())
                .as((rs, rc, cb, t, mb, mem, seed) -> new Shape(rs, rs == 2 ? Math.min(rc, 65_536) : rc, cb, t, mb, mem, seed));
    }

    private static RowSampler open(Shape s, boolean withReplacement) throws IOException {
        Path file = RowFiles.write(dir.resolve("p-" + s.rowSize() + "-" + s.rowCount() + ".bin"), s.rowSize(), s.rowCount());
        return RowSampler.builder(file).rowSize(s.rowSize()).chunkBytes(s.chunkBytes()).readerThreads(s.threads())
                .maxBatchRows(s.maxBatch()).memoryLimit(s.memoryLimit()).seed(s.seed())
                .withReplacement(withReplacement).build();
    }

    /** Opens the sampler, or checks that a too-small limit was refused for that reason. */
    private static RowSampler openOrRefuse(Shape s, boolean withReplacement) throws IOException {
        try {
            return open(s, withReplacement);
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().startsWith("memoryLimit = " + s.memoryLimit() + " bytes is too small"), e.getMessage());
            return null;
        }
    }

    @Property(tries = 25)
    void everyRowIsAnExactRowAndMemoryStaysUnderTheLimit(@ForAll("shapes") Shape shape) throws IOException {
        try (RowSampler s = openOrRefuse(shape, true)) {
            net.jqwik.api.statistics.Statistics.collect(s == null ? "memory limit refused" : "sampled");
            if (s == null) {
                return;
            }
            assertTrue(s.allocatedBytes() <= shape.memoryLimit(), s.allocatedBytes() + " > " + shape.memoryLimit());
            long wanted = Math.min(20_000, 3L * shape.rowCount() + 500);
            long got = 0;
            for (int b = 0; got < wanted; b++) {
                int n = 1 + (int) ((b * 7919L + shape.seed()) & 0x7fffffff) % shape.maxBatch();
                RowBatch batch = s.readBatch(n);
                for (int i = 0; i < n; i++) {
                    RowFiles.checkedIndex(batch.row(i), shape.rowCount());
                }
                got += n;
            }
            assertEquals(got, s.stats().rowsReturned());
        }
    }

    @Property(tries = 25)
    void withoutReplacementEveryEpochIsAPermutationOfTheRows(@ForAll("shapes") Shape shape) throws IOException {
        try (RowSampler s = openOrRefuse(shape, false)) {
            net.jqwik.api.statistics.Statistics.collect(s == null ? "memory limit refused" : "sampled");
            if (s == null) {
                return;
            }
            int rows = shape.rowCount();
            int epochs = rows > 1500 ? 1 : 3;
            boolean[] seen = new boolean[rows];
            long position = 0;
            for (int b = 0; position < (long) epochs * rows; b++) {
                int n = 1 + (int) ((b * 104_729L + shape.seed()) & 0x7fffffff) % shape.maxBatch();
                RowBatch batch = s.readBatch(n);
                for (int i = 0; i < n && position < (long) epochs * rows; i++, position++) {
                    if (position % rows == 0) {
                        java.util.Arrays.fill(seen, false);
                    }
                    int index = (int) RowFiles.checkedIndex(batch.row(i), rows);
                    assertFalse(seen[index], "row " + index + " twice in epoch " + position / rows);
                    seen[index] = true;
                }
            }
        }
    }
}
