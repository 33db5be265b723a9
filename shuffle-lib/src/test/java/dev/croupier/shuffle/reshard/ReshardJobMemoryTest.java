package dev.croupier.shuffle.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.Record;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a reshard's bytes live. The gather step of a multi-node job: a shuffle sends records of
 * every input shard to every output shard, yet each record's bytes cross between nodes at most
 * once, because each extracted shard is cut on its own node into just what each remote creation
 * task takes (handing creation tasks whole extracted shards moves about the whole dataset on
 * two nodes). And {@code max_mem_usage} against the cluster's store memory.
 */
class ReshardJobMemoryTest {

    @TempDir
    Path dir;

    @Test
    void aShuffleOnTwoNodesMovesEachRecordsBytesAtMostOnce() throws IOException {
        List<List<Record>> shards = ReshardFixtures.records(Collections.nCopies(8, 40), 20_000, 11);
        List<String> inputs = ReshardFixtures.writeInputs(dir, shards);
        long content = shards.stream().flatMap(List::stream).mapToLong(Record::size).sum();
        try (Cluster cluster = ReshardFixtures.cluster(2, dir.resolve("work"))) {
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out/o-{000..999}")
                    .outputShardSize(Long.toString(content / 8))
                    .algorithm(new Algorithm(Algorithm.Kind.SHUFFLE, false, 3L, null, null)).build();
            ReshardResult result = ReshardJob.builder(spec).baseDir(dir).build().run(cluster);
            assertTrue(result.outputs().size() >= 8, "outputs: " + result.outputs().size());
            assertEquals(content, result.creation().bytes());

            ClusterStats stats = cluster.stats();
            long fetched = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesFetched).sum();
            // About half the records are created away from their shard; the rest of the
            // traffic is metadata, which is small next to 10 KB records.
            assertTrue(fetched < content * 3 / 4, "fetched " + fetched + " of " + content + " bytes\n" + stats);
            assertTrue(stats.tasks().stream().anyMatch(t -> t.name().equals("reshard-cut")), stats.toString());
            assertEquals(List.of(), result.warnings());
        }
    }

    @Test
    void aMaxMemUsageBelowTheClusterStoresIsAWarningAndTheJobStillRuns() throws IOException {
        List<List<Record>> shards = ReshardFixtures.records(Collections.nCopies(3, 10), 2_000, 5);
        List<String> inputs = ReshardFixtures.writeInputs(dir, shards);
        try (Cluster cluster = ReshardFixtures.cluster(2, dir.resolve("work"))) {
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out/o-{000..999}")
                    .outputShardRecords(10).maxMemUsage("1MiB").build();
            ReshardResult result = ReshardJob.builder(spec).baseDir(dir).build().run(cluster);
            assertEquals(3, result.outputs().size());
            assertEquals(1, result.warnings().size(), result.warnings().toString());
            String w = result.warnings().getFirst();
            assertTrue(w.contains("max_mem_usage 1048576") && w.contains("(" + 2 * (16L << 20) + " bytes)"), w);
        }
    }
}
