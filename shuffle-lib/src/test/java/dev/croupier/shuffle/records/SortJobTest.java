package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.CroupierException;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@Timeout(300)
class SortJobTest {

    @TempDir
    Path dir;

    /** Writes the sorted partitions, in order, to one file. */
    static void writeAll(ShuffleResult<MemorySegment> result, Path out) throws IOException {
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (MemorySegment part : result.values()) {
                ByteBuffer bb = part.asByteBuffer();
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Strategy.class, names = {"SIMPLE", "RIFFLE", "MAGNET", "PUSH_PIPELINED"})
    void sortsAFileFourTimesLargerThanTheStoresBySpilling(Strategy strategy) throws IOException {
        Path in = dir.resolve("in");
        Path out = dir.resolve("out");
        long records = 640_000; // 64 MB of records through 2 x 8 MiB of store memory
        SortBenchmarkRecords.writeFile(in, records, 42, 2);
        Path spill = Files.createDirectories(dir.resolve("spill"));
        try (Cluster cluster = Cluster.builder().nodes(2).cpusPerNode(1).objectStoreBytes(8L << 20)
                .spillDirectory(spill).start()) {
            SortJob job = SortJob.builder().inputFile(in).mappers(16).partitions(8).strategy(strategy)
                    .tuning(s -> s.mapsPerRound(4)).build();
            try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                writeAll(result, out);
            }
            long spilled = cluster.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
            assertTrue(spilled > 0, "the sort spilled (store memory is a quarter of the data)");
            assertEquals(0, cluster.objectCount());
        }
        SortBenchmarkRecords.Validation input = SortBenchmarkRecords.validate(in);
        SortBenchmarkRecords.Validation output = SortBenchmarkRecords.validate(out);
        assertFalse(input.ordered());
        assertTrue(output.ordered(), "first record out of order: " + output.firstDisorder());
        assertEquals(records, output.records());
        assertEquals(input.checksum(), output.checksum());
    }

    /**
     * Reducers that write their ranges in place into one file, through stores holding a quarter
     * of the data: the file is the sorted input, no reduce output ever became an object (so
     * none was spilled), and nothing is left in the stores.
     */
    @ParameterizedTest
    @EnumSource(value = Strategy.class, names = {"SIMPLE", "RIFFLE", "MAGNET", "PUSH_PIPELINED"})
    void reducersWriteTheirRangesInPlaceIntoOneFile(Strategy strategy) throws IOException {
        Path in = dir.resolve("in");
        Path out = Files.createFile(dir.resolve("out"));
        long records = 640_000;
        SortBenchmarkRecords.writeFile(in, records, 43, 2);
        Path spill = Files.createDirectories(dir.resolve("spill"));
        try (Cluster cluster = Cluster.builder().nodes(2).cpusPerNode(1).objectStoreBytes(8L << 20)
                .spillDirectory(spill).start()) {
            SortJob job = SortJob.builder().inputFile(in).mappers(16).partitions(8).strategy(strategy)
                    .tuning(s -> s.mapsPerRound(4)).build();
            try (ShuffleResult<Long> result = job.runInto(cluster, out)) {
                assertEquals(records * 100, result.values().stream().mapToLong(Long::longValue).sum());
            }
            assertEquals(0, cluster.objectCount());
        }
        SortBenchmarkRecords.Validation output = SortBenchmarkRecords.validate(out);
        assertTrue(output.ordered(), "first record out of order: " + output.firstDisorder());
        assertEquals(records, output.records());
        assertEquals(SortBenchmarkRecords.validate(in).checksum(), output.checksum());
    }

    /**
     * A sort written into a file keeps only its map outputs in the stores, so AUTO counts only
     * them: 10 MB of records on 16 MiB of stores run SIMPLE into a file, and PUSH_PIPELINED
     * when the sorted ranges stay in the stores as well.
     */
    @org.junit.jupiter.api.Test
    void autoCountsTheOutputsOnlyOfASortThatKeepsThemInTheStores() throws IOException {
        Path in = dir.resolve("in");
        Path out = Files.createFile(dir.resolve("out"));
        SortBenchmarkRecords.writeFile(in, 100_000, 44, 2);
        Path spill = Files.createDirectories(dir.resolve("spill"));
        try (Cluster cluster = Cluster.builder().nodes(2).cpusPerNode(1).objectStoreBytes(8L << 20)
                .spillDirectory(spill).start()) {
            SortJob job = SortJob.builder().inputFile(in).mappers(4).partitions(4).build();
            try (ShuffleResult<Long> written = job.runInto(cluster, out)) {
                written.values();
                assertEquals(Strategy.SIMPLE, written.strategy());
            }
            try (ShuffleResult<MemorySegment> kept = job.run(cluster)) {
                kept.values();
                assertEquals(Strategy.PUSH_PIPELINED, kept.strategy());
            }
        }
    }

    @org.junit.jupiter.api.Test
    void reducersWriteOnePartFilePerRange() throws IOException {
        Path in = dir.resolve("in");
        long records = 90_000;
        SortBenchmarkRecords.writeFile(in, records, 44, 2);
        Path parts = Files.createDirectories(dir.resolve("parts"));
        Path all = dir.resolve("all");
        try (Cluster cluster = Cluster.builder().nodes(3).objectStoreBytes(16L << 20).spillDirectory(dir).start();
             ShuffleResult<Long> result = SortJob.builder().inputFile(in).mappers(5).partitions(7)
                     .strategy(Strategy.PUSH_PIPELINED).build().runIntoParts(cluster, parts, "p%02d")) {
            try (FileChannel ch = FileChannel.open(all, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (int r = 0; r < 7; r++) {
                    Path part = parts.resolve(String.format("p%02d", r));
                    assertEquals((long) result.values().get(r), Files.size(part));
                    assertTrue(SortBenchmarkRecords.validate(part).ordered(), part + " is sorted");
                    try (FileChannel p = FileChannel.open(part)) {
                        p.transferTo(0, p.size(), ch);
                    }
                }
            }
        }
        SortBenchmarkRecords.Validation output = SortBenchmarkRecords.validate(all);
        assertTrue(output.ordered(), "the parts are in key order: record " + output.firstDisorder());
        assertEquals(records, output.records());
        assertEquals(SortBenchmarkRecords.validate(in).checksum(), output.checksum());
    }

    @org.junit.jupiter.api.Test
    void writingIntoAFileThatIsNotThereIsRefusedByName() throws IOException {
        Path in = dir.resolve("in");
        SortBenchmarkRecords.writeFile(in, 1000, 1, 1);
        Path missing = dir.resolve("missing");
        try (Cluster cluster = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(dir).start()) {
            SortJob job = SortJob.builder().inputFile(in).build();
            CroupierException e = assertThrows(CroupierException.class, () -> job.runInto(cluster, missing));
            assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
            e = assertThrows(CroupierException.class, () -> job.runIntoParts(cluster, missing, "p%d"));
            assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        }
    }

    /**
     * A node dies while the sort runs (at a random moment) and comes back empty: lost map, merge
     * and reduce outputs are rebuilt from lineage (maps re-read their file range), and the output
     * is still exactly the sorted input, also when reducers write it in place (lost size reports
     * are rebuilt with their maps).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"SIMPLE, false", "RIFFLE, false", "MAGNET, false",
            "PUSH_PIPELINED, false", "SIMPLE, true", "MAGNET, true", "PUSH_PIPELINED, true"})
    void aNodeThatDiesMidSortIsRebuiltFromLineage(Strategy strategy, boolean inPlace) throws Exception {
        Path in = dir.resolve("in");
        Path out = dir.resolve("out");
        long records = 300_000;
        SortBenchmarkRecords.writeFile(in, records, 11, 2);
        Path spill = Files.createDirectories(dir.resolve("spill"));
        long delayMillis = new java.util.Random().nextInt(400);
        try (Cluster cluster = Cluster.builder().nodes(3).cpusPerNode(1).objectStoreBytes(16L << 20)
                .spillDirectory(spill).start()) {
            Thread killer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(delayMillis);
                    cluster.killNode(1);
                    Thread.sleep(50);
                    cluster.restartNode(1);
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                }
            });
            SortJob job = SortJob.builder().inputFile(in).mappers(12).partitions(6).strategy(strategy)
                    .tuning(s -> s.mapsPerRound(3)).build();
            if (inPlace) {
                Files.createFile(out);
                try (ShuffleResult<Long> result = job.runInto(cluster, out)) {
                    assertEquals(records * 100, result.values().stream().mapToLong(Long::longValue).sum());
                }
                killer.join();
            } else {
                try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                    // A view from get() lives as long as its node (see docs/architecture.md): read
                    // the outputs once the node is back, while lost ones may still be rebuilding.
                    killer.join();
                    writeAll(result, out);
                }
            }
        }
        SortBenchmarkRecords.Validation input = SortBenchmarkRecords.validate(in);
        SortBenchmarkRecords.Validation output = SortBenchmarkRecords.validate(out);
        assertTrue(output.ordered(), "killed after " + delayMillis + " ms: record " + output.firstDisorder() + " out of order");
        assertEquals(records, output.records(), "killed after " + delayMillis + " ms");
        assertEquals(input.checksum(), output.checksum(), "killed after " + delayMillis + " ms");
    }

    @ParameterizedTest
    @EnumSource(value = Strategy.class, names = {"SIMPLE", "PUSH_PIPELINED", "AUTO"})
    void sortsBlocksAlreadyInTheCluster(Strategy strategy) {
        try (Cluster cluster = Cluster.builder().nodes(3).objectStoreBytes(32L << 20).spillDirectory(dir).start()) {
            var inputs = new java.util.ArrayList<dev.croupier.futures.ObjectRef<MemorySegment>>();
            Checksum expected = Checksum.ZERO;
            for (int i = 0; i < 5; i++) {
                MemorySegment block = MemorySegment.ofArray(new byte[1000 * 100]);
                SortBenchmarkRecords.generate(9, i * 1000L, block);
                expected = expected.plus(SortBenchmarkRecords.checksum(block));
                inputs.add(cluster.put(block));
            }
            try (ShuffleResult<MemorySegment> result = SortJob.builder().inputs(inputs).partitions(4)
                    .strategy(strategy).build().run(cluster)) {
                Checksum actual = Checksum.ZERO;
                byte[] last = null;
                for (MemorySegment part : result.values()) {
                    assertTrue(RecordKernels.isSorted(SortBenchmarkRecords.LAYOUT, part));
                    actual = actual.plus(SortBenchmarkRecords.checksum(part));
                    if (part.byteSize() > 0) {
                        byte[] first = RecordKernels.key(SortBenchmarkRecords.LAYOUT, part, 0);
                        if (last != null) {
                            assertTrue(java.util.Arrays.compareUnsigned(last, first) <= 0, "partitions are in key order");
                        }
                        last = RecordKernels.key(SortBenchmarkRecords.LAYOUT, part, part.byteSize() / 100 - 1);
                    }
                }
                assertEquals(expected, actual);
            }
            inputs.forEach(dev.croupier.futures.ObjectRef::release);
        }
    }

    @org.junit.jupiter.api.Test
    void aUserComparatorSortsDescendingAcrossPartitions() throws IOException {
        Path in = dir.resolve("in");
        SortBenchmarkRecords.writeFile(in, 50_000, 3, 2);
        KeyComparator descending = (a, ao, b, bo) -> {
            long x = a.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), ao);
            long y = b.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), bo);
            return Long.compareUnsigned(y, x);
        };
        try (Cluster cluster = Cluster.builder().nodes(2).objectStoreBytes(32L << 20).spillDirectory(dir).start();
             ShuffleResult<MemorySegment> result = SortJob.builder().inputFile(in).mappers(4).partitions(5)
                     .comparator(descending).strategy(Strategy.SIMPLE).build().run(cluster)) {
            Checksum sum = Checksum.ZERO;
            long records = 0;
            byte[] previous = null;
            for (MemorySegment part : result.values()) {
                assertTrue(RecordKernels.isSorted(SortBenchmarkRecords.LAYOUT, part, descending));
                long n = SortBenchmarkRecords.LAYOUT.records(part.byteSize());
                if (n > 0) {
                    byte[] first = RecordKernels.key(SortBenchmarkRecords.LAYOUT, part, 0);
                    assertTrue(previous == null || descending.compare(MemorySegment.ofArray(previous), 0,
                            MemorySegment.ofArray(first), 0) <= 0, "partitions in the comparator's order");
                    previous = RecordKernels.key(SortBenchmarkRecords.LAYOUT, part, n - 1);
                }
                records += n;
                sum = sum.plus(SortBenchmarkRecords.checksum(part));
            }
            assertEquals(50_000, records);
            assertEquals(SortBenchmarkRecords.validate(in).checksum(), sum);
        }
    }

    @org.junit.jupiter.api.Test
    void aFileThatIsNotWholeRecordsIsRefusedWithItsNameAndOffset() throws IOException {
        Path bad = dir.resolve("bad");
        Files.write(bad, new byte[250]);
        CroupierException e = assertThrows(CroupierException.class, () -> SortBenchmarkRecords.validate(bad));
        assertTrue(e.getMessage().contains(bad.toString()) && e.getMessage().contains("offset 200"), e.getMessage());
        try (Cluster cluster = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(dir).start()) {
            e = assertThrows(CroupierException.class,
                    () -> SortJob.builder().inputFile(bad).build().run(cluster));
            assertTrue(e.getMessage().contains(bad.toString()) && e.getMessage().contains("offset 200"), e.getMessage());
        }
    }
}
