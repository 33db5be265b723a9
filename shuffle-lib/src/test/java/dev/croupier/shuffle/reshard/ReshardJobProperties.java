package dev.croupier.shuffle.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.Record;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.formats.reshard.internal.RecordOrdering;
import dev.croupier.futures.Cluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * One property for every algorithm, on a 2-3 node embedded cluster with 1-4 sort partitions
 * (so output shards span partitions and the packing state crosses planning tasks): the
 * multiset of records is preserved, no record is split, every shard but the last reaches the
 * target and only its last record crosses it, the order is the algorithm's (against a naive
 * reference written without RecordOrdering's sort), every kind but a shuffle writes exactly
 * the shards {@link LocalReshard} writes, and a second run with the same seed on one node (no
 * gather step) with another number of sort partitions writes the same shards.
 */
class ReshardJobProperties {

    record Job(List<List<Record>> shards, Algorithm algorithm, long target, int nodes, int partitions, String extension) {
    }

    @Property(tries = 15)
    void reshardPreservesRecordsPacksWithinOneRecordAndFollowsTheAlgorithm(@ForAll("jobs") Job job) throws IOException {
        Path dir = Files.createTempDirectory("reshard-job-prop");
        try (Cluster cluster = ReshardFixtures.cluster(job.nodes(), dir.resolve("work"))) {
            List<String> inputs = ReshardFixtures.writeInputs(dir, job.shards());
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out/o-{0000..9999}")
                    .outputExtension(job.extension()).outputShardSize(Long.toString(job.target()))
                    .algorithm(job.algorithm()).build();
            ReshardJob reshard = ReshardJob.builder(spec).baseDir(dir).sortPartitions(job.partitions()).build();
            ReshardResult result = reshard.run(cluster);
            List<List<Record>> outputs = readOutputs(result);

            List<Record> flat = outputs.stream().flatMap(List::stream).toList();
            List<Record> input = job.shards().stream().flatMap(List::stream).toList();
            // Multiset preserved and no record split: each key (unique in the job) appears once, with all its files.
            assertEquals(ReshardFixtures.describe(sortedByKey(input)), ReshardFixtures.describe(sortedByKey(flat)));
            for (int i = 0; i < outputs.size(); i++) {
                long sum = outputs.get(i).stream().mapToLong(Record::size).sum();
                assertFalse(outputs.get(i).isEmpty(), "shard " + i + " is empty");
                if (i < outputs.size() - 1) {
                    assertTrue(sum >= job.target(), "shard " + i + " holds " + sum + " < target " + job.target());
                    assertTrue(sum - outputs.get(i).getLast().size() < job.target(),
                            "shard " + i + " is more than one record over the target");
                }
            }
            if (job.algorithm().kind() != Algorithm.Kind.SHUFFLE) {
                assertEquals(expectedOrder(input, job.algorithm()), flat.stream().map(Record::key).toList(),
                        "order of " + job.algorithm());
            } else if (input.size() >= 12) {
                // 1 in 12! that a uniform shuffle keeps extraction order.
                assertFalse(input.stream().map(Record::key).toList().equals(flat.stream().map(Record::key).toList()),
                        "a shuffle of " + input.size() + " records kept their order");
            }
            assertEquals(input.size(), result.extraction().records());
            assertEquals(flat.size(), result.creation().records());
            assertEquals(List.of(), result.warnings());
            assertEquals(0, cluster.objectCount(), "every object released");
            List<String> firstRun = ReshardFixtures.listFiles(dir.resolve("out"));
            assertEquals(result.outputs().size(), firstRun.size(), "no temporary file left: " + firstRun);

            if (job.algorithm().kind() != Algorithm.Kind.SHUFFLE) {
                ReshardResult local = LocalReshard.builder(reshard.spec().toBuilder()
                                .outputFormat("local/o-{0000..9999}").build())
                        .baseDir(dir).workDir(Files.createDirectories(dir.resolve("local-work"))).build().run();
                assertSameShards(readOutputs(local), outputs, "LocalReshard");
            }
            // Same spec, same seed, one node and another number of sort partitions: the same shards.
            ReshardResult again;
            try (Cluster one = ReshardFixtures.cluster(1, dir.resolve("work-1"))) {
                again = ReshardJob.builder(reshard.spec().toBuilder().outputFormat("one/o-{0000..9999}").build())
                        .baseDir(dir).sortPartitions(job.partitions() % 4 + 1).build().run(one);
            }
            assertEquals(result.shuffleSeed(), again.shuffleSeed());
            assertSameShards(readOutputs(again), outputs, "one node");
        } finally {
            ReshardFixtures.deleteTree(dir);
        }
    }

    private static void assertSameShards(List<List<Record>> expected, List<List<Record>> actual, String what) {
        assertEquals(expected.size(), actual.size(), "number of shards against " + what);
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(ReshardFixtures.describe(expected.get(i)), ReshardFixtures.describe(actual.get(i)),
                    "shard " + i + " against " + what);
        }
    }

    private static List<List<Record>> readOutputs(ReshardResult result) throws IOException {
        List<List<Record>> outputs = new ArrayList<>();
        for (ReshardResult.OutputShard o : result.outputs()) {
            List<Record> records = ReshardFixtures.read(o.path());
            assertEquals(o.records(), records.size());
            assertEquals(Files.size(o.path()), o.fileBytes());
            outputs.add(records);
        }
        return outputs;
    }

    private static List<Record> sortedByKey(List<Record> records) {
        return records.stream().sorted(Comparator.comparing(Record::key)).toList();
    }

    /** Naive reference: a stable sort of the records in extraction order by the algorithm's key. */
    private static List<String> expectedOrder(List<Record> input, Algorithm a) {
        Comparator<Record> byKey = switch (a.kind()) {
            case NONE -> (x, y) -> 0;
            case ALPHANUMERIC -> Comparator.comparing(Record::key);
            case MD5 -> Comparator.comparing(r -> RecordOrdering.md5(r.key()));
            case CONTENT -> Comparator.comparingLong(r -> Long.parseLong(ReshardFixtures.contentKey(r)));
            case SHUFFLE -> throw new IllegalArgumentException("no reference order for a shuffle");
        };
        List<Record> sorted = new ArrayList<>(input);
        sorted.sort(a.decreasing() ? byKey.reversed() : byKey);
        return sorted.stream().map(Record::key).toList();
    }

    @Provide
    Arbitrary<Job> jobs() {
        Arbitrary<Algorithm> algorithms = Combinators.combine(
                Arbitraries.of(Algorithm.Kind.values()), Arbitraries.of(true, false), Arbitraries.longs().between(0, 1000))
                .as((k, dec, seed) -> new Algorithm(k, dec, k == Algorithm.Kind.SHUFFLE ? seed : null,
                        k == Algorithm.Kind.CONTENT ? ".cls" : null,
                        k == Algorithm.Kind.CONTENT ? Algorithm.ContentKeyType.INT : null));
        Arbitrary<List<Integer>> shardSizes = Arbitraries.integers().between(0, 12).list().ofMinSize(1).ofMaxSize(6);
        Arbitrary<Integer> nodes = Arbitraries.integers().between(2, 3);
        Arbitrary<Integer> partitions = Arbitraries.integers().between(1, 4);
        Arbitrary<String> extensions = Arbitraries.of(".tar", ".tar.gz", ".zip");
        return Combinators.combine(shardSizes, algorithms, Arbitraries.longs().between(1, 6000), nodes, partitions,
                        extensions, Arbitraries.longs())
                .as((sizes, alg, target, n, p, ext, seed) ->
                        new Job(ReshardFixtures.records(sizes, 2000, seed), alg, target, n, p, ext));
    }
}
