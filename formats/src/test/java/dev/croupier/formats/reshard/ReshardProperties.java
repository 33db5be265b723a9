package dev.croupier.formats.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.RecordReader;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardWriter;
import dev.croupier.formats.reshard.internal.RecordMeta;
import dev.croupier.formats.reshard.internal.RecordOrdering;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * One property for every algorithm: resharding preserves the multiset of records, never splits
 * one, keeps every output shard but the last within one record over the target, and orders
 * records as the algorithm says (checked against a naive reference per algorithm).
 */
class ReshardProperties {

    record Job(List<List<Record>> shards, Algorithm algorithm, long target) {
    }

    @Property(tries = 30)
    void reshardPreservesRecordsAndFollowsTheAlgorithm(@ForAll("jobs") Job job) throws IOException {
        Path dir = Files.createTempDirectory("reshard-prop");
        try {
            List<String> inputs = writeInputs(dir, job.shards());
            ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out/o-{0000..9999}")
                    .outputExtension(".tar").outputShardSize(Long.toString(job.target())).algorithm(job.algorithm())
                    .build();
            ReshardResult result = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();

            List<List<Record>> outputs = new ArrayList<>();
            for (ReshardResult.OutputShard o : result.outputs()) {
                List<Record> records = new ArrayList<>();
                try (RecordReader r = RecordReader.open(o.path())) {
                    for (Record rec = r.next(); rec != null; rec = r.next()) {
                        records.add(rec);
                    }
                }
                outputs.add(records);
                assertEquals(o.records(), records.size());
            }
            List<Record> flat = outputs.stream().flatMap(List::stream).toList();
            List<Record> input = job.shards().stream().flatMap(List::stream).toList();

            // Multiset preserved and no record split: each key (unique per job) appears once, whole.
            assertEquals(describe(input.stream().sorted(Comparator.comparing(Record::key)).toList()),
                    describe(flat.stream().sorted(Comparator.comparing(Record::key)).toList()));

            // Shard sizes: all but the last reach the target, and only their last record crosses it.
            for (int i = 0; i < outputs.size(); i++) {
                long sum = outputs.get(i).stream().mapToLong(Record::size).sum();
                if (i < outputs.size() - 1) {
                    assertTrue(sum >= job.target(), "shard " + i + " holds " + sum + " < target " + job.target());
                    long beforeLast = sum - outputs.get(i).getLast().size();
                    assertTrue(beforeLast < job.target(), "shard " + i + " is more than one record over the target");
                }
                assertTrue(!outputs.get(i).isEmpty());
            }

            assertEquals(expectedOrder(job), flat.stream().map(Record::key).toList(), "order of " + job.algorithm());
            try (Stream<Path> s = Files.exists(dir.resolve("out")) ? Files.list(dir.resolve("out")) : Stream.empty()) {
                assertTrue(s.allMatch(p -> p.getFileName().toString().startsWith("o-")), "no temp files left");
            }
            try (Stream<Path> s = Files.list(dir)) {
                assertEquals(List.of(), s.map(p -> p.getFileName().toString())
                        .filter(n -> !n.equals("in") && !n.equals("out")).toList(), "work folder removed");
            }
        } finally {
            deleteTree(dir);
        }
    }

    /** Naive reference orders, written independently of RecordOrdering where the algorithm allows. */
    private static List<String> expectedOrder(Job job) {
        List<Record> input = job.shards().stream().flatMap(List::stream).toList();
        Algorithm a = job.algorithm();
        List<Record> sorted = new ArrayList<>(input);
        switch (a.kind()) {
            case NONE -> { }
            case ALPHANUMERIC -> sorted.sort(Comparator.comparing(Record::key));
            case MD5 -> sorted.sort(Comparator.comparing(r -> RecordOrdering.md5(r.key())));
            case CONTENT -> sorted.sort(Comparator.comparingLong(r -> Long.parseLong(
                    StandardCharsets.UTF_8.decode(r.file(".cls").content()).toString().strip())));
            case SHUFFLE -> {
                // Reference Fisher-Yates over extraction order with the same seed.
                java.util.SplittableRandom rnd = new java.util.SplittableRandom(a.seed());
                for (int i = sorted.size() - 1; i > 0; i--) {
                    int j = rnd.nextInt(i + 1);
                    Record t = sorted.get(i);
                    sorted.set(i, sorted.get(j));
                    sorted.set(j, t);
                }
            }
        }
        if (a.decreasing() && a.kind() != Algorithm.Kind.NONE && a.kind() != Algorithm.Kind.SHUFFLE) {
            // Stable decreasing: equal keys keep extraction order.
            sorted = reverseStable(input, a);
        }
        return sorted.stream().map(Record::key).toList();
    }

    private static List<Record> reverseStable(List<Record> increasing, Algorithm a) {
        Comparator<Record> c = switch (a.kind()) {
            case ALPHANUMERIC -> Comparator.comparing(Record::key);
            case MD5 -> Comparator.comparing(r -> RecordOrdering.md5(r.key()));
            default -> Comparator.comparingLong(r -> Long.parseLong(
                    StandardCharsets.UTF_8.decode(r.file(".cls").content()).toString().strip()));
        };
        List<Record> out = new ArrayList<>(increasing);
        out.sort(c.reversed());
        return out;
    }

    @Provide
    Arbitrary<Job> jobs() {
        Arbitrary<Algorithm> algorithms = Combinators.combine(
                Arbitraries.of(Algorithm.Kind.values()), Arbitraries.of(true, false), Arbitraries.longs().between(0, 1000))
                .as((k, dec, seed) -> new Algorithm(k, dec, k == Algorithm.Kind.SHUFFLE ? seed : null,
                        k == Algorithm.Kind.CONTENT ? ".cls" : null,
                        k == Algorithm.Kind.CONTENT ? Algorithm.ContentKeyType.INT : null));
        Arbitrary<List<Integer>> shardSizes = Arbitraries.integers().between(0, 8).list().ofMinSize(1).ofMaxSize(5);
        Arbitrary<long[]> seeds = Arbitraries.longs().array(long[].class).ofSize(1);
        return Combinators.combine(shardSizes, algorithms, Arbitraries.longs().between(1, 6000), seeds)
                .as((sizes, alg, target, seed) -> new Job(records(sizes, seed[0]), alg, target));
    }

    /** Records with globally unique keys, 1-3 files each, a .cls file holding a small integer. */
    private static List<List<Record>> records(List<Integer> sizes, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        List<List<Record>> shards = new ArrayList<>();
        int n = 0;
        for (int size : sizes) {
            List<Record> shard = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                List<RecordFile> files = new ArrayList<>();
                files.add(RecordFile.of(".cls", Integer.toString(r.nextInt(5)).getBytes(StandardCharsets.UTF_8)));
                byte[] jpg = new byte[r.nextInt(2000)];
                r.nextBytes(jpg);
                files.add(RecordFile.of(".jpg", jpg));
                if (r.nextBoolean()) {
                    files.add(RecordFile.of(".seg.png", new byte[r.nextInt(500)]));
                }
                shard.add(new Record(String.format("d/%c%04d", (char) ('a' + r.nextInt(26)), n++), files));
            }
            shards.add(shard);
        }
        return shards;
    }

    static List<String> writeInputs(Path dir, List<List<Record>> shards) throws IOException {
        List<String> names = new ArrayList<>();
        Files.createDirectories(dir.resolve("in"));
        for (int i = 0; i < shards.size(); i++) {
            String name = String.format("in/s-%03d.tar", i);
            try (ShardWriter w = ShardFormat.TAR.create(dir.resolve(name))) {
                for (Record rec : shards.get(i)) {
                    rec.writeTo(w);
                }
                w.commit();
            }
            names.add(name);
        }
        return names;
    }

    static String describe(List<Record> records) {
        StringBuilder b = new StringBuilder();
        for (Record r : records) {
            b.append(r.key()).append('{');
            for (RecordFile f : r.files()) {
                b.append(f.extension()).append(':').append(f.size()).append(':').append(f.content().hashCode()).append(',');
            }
            b.append("}\n");
        }
        return b.toString();
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Property(tries = 100)
    void orderingIsAPermutation(@ForAll("sizes") List<Long> sizes, @ForAll Algorithm.Kind kind, @ForAll boolean decreasing) {
        List<RecordMeta> metas = new ArrayList<>();
        for (int i = 0; i < sizes.size(); i++) {
            metas.add(new RecordMeta("k" + (i * 7919 % 101), sizes.get(i), i % 3, i, Long.toString(sizes.get(i)), i));
        }
        Algorithm a = new Algorithm(kind, decreasing, 7L, ".cls", Algorithm.ContentKeyType.INT);
        List<RecordMeta> out = RecordOrdering.order(metas, a, 0);
        TreeMap<Long, Integer> in = new TreeMap<>();
        TreeMap<Long, Integer> got = new TreeMap<>();
        metas.forEach(m -> in.merge(m.handle(), 1, Integer::sum));
        out.forEach(m -> got.merge(m.handle(), 1, Integer::sum));
        assertEquals(in, got);
        assertEquals(out, RecordOrdering.order(metas, a, 0), "deterministic");
    }

    @Property(tries = 100)
    void comparatorSortsAsOrderDoes(@ForAll("sizes") List<Long> sizes, @ForAll Algorithm.Kind kind,
                                    @ForAll boolean decreasing, @ForAll boolean stringKeys) {
        net.jqwik.api.Assume.that(kind != Algorithm.Kind.SHUFFLE);
        List<RecordMeta> metas = new ArrayList<>();
        for (int i = 0; i < sizes.size(); i++) {
            // Few distinct keys and content keys, so ties (broken by extraction order) are common.
            metas.add(new RecordMeta("k" + (i * 7919 % 13), sizes.get(i), (i * 31) % 4, i,
                    Long.toString(sizes.get(i) % 7), i));
        }
        Algorithm a = new Algorithm(kind, decreasing, null, ".cls",
                stringKeys ? Algorithm.ContentKeyType.STRING : Algorithm.ContentKeyType.INT);
        List<RecordMeta> bySort = new ArrayList<>(metas);
        bySort.sort(RecordOrdering.comparator(a));
        assertEquals(RecordOrdering.order(metas, a, 0), bySort);
    }

    @Provide
    Arbitrary<List<Long>> sizes() {
        return Arbitraries.longs().between(0, 3000).list().ofMaxSize(60);
    }
}
