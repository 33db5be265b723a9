package dev.croupier.shuffle.reshard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.Record;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.futures.Cluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reshard tasks' typed results and their byte frames: each round-trips, a short frame is
 * refused by name, and a whole job runs on a cluster that serializes every value as a node
 * process would, with no allow-list entry for Croupier's classes (results are bytes).
 */
class ReshardTaskResultsTest {

    @TempDir
    Path dir;

    @Test
    void extractionReportRoundTrips() {
        var report = new ReshardTasks.ExtractionReport(12, 3456, List.of("duplicate key 'a' ", "émoji ✓", ""));
        assertEquals(report, ReshardTasks.ExtractionReport.decode(report.encode()));
        var empty = new ReshardTasks.ExtractionReport(0, 0, List.of());
        assertEquals(empty, ReshardTasks.ExtractionReport.decode(empty.encode()));
    }

    @Test
    void routesRoundTripAsTwoArrays() {
        long[] outputs = new long[1000];
        long[] handles = new long[1000];
        for (int i = 0; i < outputs.length; i++) {
            outputs[i] = (long) (i % 3) << 40 | i / 7;
            handles[i] = 999 - i;
        }
        byte[] frame = new ReshardTasks.Routes(outputs, handles).encode();
        // 16 bytes a record: the frame stays as small as the pairs it carries.
        assertEquals(8 + 16 * outputs.length, frame.length);
        ReshardTasks.Routes back = ReshardTasks.Routes.decode(frame);
        assertArrayEquals(outputs, back.outputs());
        assertArrayEquals(handles, back.handles());
        assertThrows(IllegalArgumentException.class, () -> new ReshardTasks.Routes(new long[2], new long[1]));
    }

    @Test
    void createdShardRoundTrips() {
        var created = new ReshardTasks.CreatedShard("out/.o-1.tar.123.tmp", 10240, 7, 9000);
        assertEquals(created, ReshardTasks.CreatedShard.decode(created.encode()));
    }

    @Test
    void aShortFrameIsRefusedByName() {
        byte[] frame = new ReshardTasks.CreatedShard("x", 1, 2, 3).encode();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ReshardTasks.CreatedShard.decode(Arrays.copyOf(frame, frame.length - 1)));
        assertTrue(e.getMessage().contains("created shard"), e.getMessage());
        byte[] foreign = frame.clone();
        foreign[0] = 9;
        e = assertThrows(IllegalStateException.class, () -> ReshardTasks.CreatedShard.decode(foreign));
        assertTrue(e.getMessage().contains("version 9"), e.getMessage());
    }

    @Test
    void aJobRunsOnAClusterThatSerializesEveryValue() throws IOException {
        List<List<Record>> shards = ReshardFixtures.records(Collections.nCopies(4, 12), 3_000, 7);
        List<String> inputs = ReshardFixtures.writeInputs(dir, shards);
        long content = shards.stream().flatMap(List::stream).mapToLong(Record::size).sum();
        Path work = dir.resolve("work");
        try (Cluster cluster = Cluster.builder().nodes(2).cpusPerNode(2).objectStoreBytes(16L << 20).serializing(true)
                .memoryDirectory(Files.createDirectories(work.resolve("mem")))
                .spillDirectory(Files.createDirectories(work.resolve("spill"))).start()) {
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out/o-{000..999}")
                    .outputShardSize(Long.toString(content / 5))
                    .algorithm(new Algorithm(Algorithm.Kind.SHUFFLE, false, 3L, null, null)).build();
            ReshardResult result = ReshardJob.builder(spec).baseDir(dir).build().run(cluster);
            assertEquals(48, result.creation().records());
            assertEquals(content, result.creation().bytes());
            assertTrue(cluster.stats().tasks().stream().anyMatch(t -> t.name().equals("reshard-cut")),
                    "the gather step ran, so routes crossed too");
            assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")).stream()
                    .filter(n -> n.endsWith(".tmp")).toList());
        }
    }
}
