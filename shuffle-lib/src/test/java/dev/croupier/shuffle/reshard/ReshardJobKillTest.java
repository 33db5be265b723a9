package dev.croupier.shuffle.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.formats.Record;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.futures.Cluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node dies at a random moment of a reshard job and comes back empty: lost extracted shards,
 * metadata blocks and creation results are rebuilt from lineage, and the job writes exactly
 * the shards a run without the kill writes, with no temporary file left.
 */
@Timeout(120)
class ReshardJobKillTest {

    @TempDir
    Path dir;

    @RepeatedTest(3)
    void aNodeThatDiesMidJobLeavesTheOutputUnchanged() throws Exception {
        List<List<Record>> shards = ReshardFixtures.records(java.util.Collections.nCopies(12, 60), 30_000, 5);
        List<String> inputs = ReshardFixtures.writeInputs(dir, shards);
        Algorithm shuffle = new Algorithm(Algorithm.Kind.SHUFFLE, false, 17L, null, null);
        long start = System.nanoTime();
        List<String> expected = run(inputs, shuffle, "calm", -1);
        long calmMillis = (System.nanoTime() - start) / 1_000_000;
        // somewhere inside the job: extraction, the metadata sort or creation
        long delayMillis = new Random().nextLong(Math.max(1, calmMillis * 4 / 5));
        List<String> killed = run(inputs, shuffle, "killed", delayMillis);
        assertEquals(expected.size(), killed.size(), "killed after " + delayMillis + " ms");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i), killed.get(i), "shard " + i + ", killed after " + delayMillis + " ms");
        }
    }

    /** Runs the job into {@code out-<name>}; returns every output shard described, after checking the folder holds only them. */
    private List<String> run(List<String> inputs, Algorithm algorithm, String name, long killAfterMillis) throws Exception {
        Path work = Files.createDirectories(dir.resolve("work-" + name));
        try (Cluster cluster = ReshardFixtures.cluster(3, work)) {
            Thread killer = Thread.ofPlatform().start(() -> {
                if (killAfterMillis < 0) {
                    return;
                }
                try {
                    Thread.sleep(killAfterMillis);
                    cluster.killNode(1);
                    Thread.sleep(50);
                    cluster.restartNode(1);
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                }
            });
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out-" + name + "/o-{0000..9999}")
                    .outputExtension(".tar").outputShardSize("200000").algorithm(algorithm).build();
            ReshardResult result = ReshardJob.builder(spec).baseDir(dir).sortPartitions(3).build().run(cluster);
            killer.join();
            List<String> described = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (ReshardResult.OutputShard o : result.outputs()) {
                described.add(ReshardFixtures.describe(ReshardFixtures.read(o.path())));
                names.add(dir.resolve("out-" + name).relativize(o.path()).toString());
            }
            assertEquals(names.stream().sorted().toList(), ReshardFixtures.listFiles(dir.resolve("out-" + name)),
                    "only the committed shards, no temporary file");
            return described;
        }
    }
}
