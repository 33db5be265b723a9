package dev.croupier.formats.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import dev.croupier.formats.BadShardException;
import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.RecordReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class LocalReshardTest {
    @TempDir
    Path dir;

    /** n shards of k records; record i of shard s has key train/s-i, a 1000-byte .jpg and a .cls. */
    private List<String> inputs(int shards, int records) throws IOException {
        List<List<Record>> all = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            List<Record> shard = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                byte[] jpg = new byte[1000];
                jpg[0] = (byte) s;
                jpg[1] = (byte) i;
                shard.add(new Record(String.format("train/%03d-%02d", s, i), List.of(RecordFile.of(".jpg", jpg),
                        RecordFile.of(".cls", Integer.toString((s * 7 + i) % 10).getBytes(StandardCharsets.UTF_8)))));
            }
            all.add(shard);
        }
        return ReshardProperties.writeInputs(dir, all);
    }

    private List<Path> tree() throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(dir::relativize).sorted().toList();
        }
    }

    private static List<Record> read(Path shard) throws IOException {
        List<Record> out = new ArrayList<>();
        try (RecordReader r = RecordReader.open(shard)) {
            for (Record rec = r.next(); rec != null; rec = r.next()) {
                out.add(rec);
            }
        }
        return out;
    }

    /** The docs/reshard.md example: 100 small tar shards into 10 shuffled ones, reproducible by seed. */
    @Test
    void hundredShardsIntoTenShuffled() throws IOException {
        inputs(100, 10);
        String json = """
                {"input_format": "in/s-{000..099}.tar", "output_format": "out/shuffled-{00..09}.tar",
                 "output_shard_records": 100, "algorithm": {"kind": "shuffle", "seed": "1234"}}""";
        List<String> progress = java.util.Collections.synchronizedList(new ArrayList<>());
        ReshardResult r = LocalReshard.builder(ReshardSpecJson.parse(json)).baseDir(dir).workDir(dir)
                .progress((phase, done, total) -> progress.add(phase + " " + done + "/" + total)).build().run();
        assertEquals(10, r.outputs().size());
        assertEquals(110, progress.size());
        assertTrue(progress.contains("extraction 100/100") && progress.contains("creation 10/10"), progress.toString());
        com.fasterxml.jackson.databind.JsonNode summary = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.toJson());
        assertEquals(1000, summary.get("creation").get("records").asLong());
        assertEquals("1234", summary.get("shuffle_seed").asText());
        assertEquals(10, summary.get("outputs").size());
        assertEquals(Files.size(r.outputs().getFirst().path()), summary.get("outputs").get(0).get("file_bytes").asLong());
        assertEquals(1234, r.shuffleSeed());
        assertEquals(100, r.extraction().shards());
        assertEquals(1000, r.extraction().records());
        List<String> keys = new ArrayList<>();
        for (ReshardResult.OutputShard o : r.outputs()) {
            List<Record> recs = read(o.path());
            assertEquals(100, recs.size());
            assertEquals(Files.size(o.path()), o.fileBytes());
            recs.forEach(x -> keys.add(x.key()));
        }
        assertEquals(keys.stream().sorted().toList(), keys.stream().sorted().distinct().toList());
        assertNotEquals(keys.stream().sorted().toList(), keys, "shuffled");

        ReshardSpec again = ReshardSpecJson.parse(json.replace("shuffled-", "again-"));
        ReshardResult r2 = LocalReshard.builder(again).baseDir(dir).workDir(dir).build().run();
        List<String> keys2 = new ArrayList<>();
        for (ReshardResult.OutputShard o : r2.outputs()) {
            read(o.path()).forEach(x -> keys2.add(x.key()));
        }
        assertEquals(keys, keys2, "the same seed gives the same output");
    }

    @Test
    void missingShardsAreNamedBeforeAnyWork() throws IOException {
        inputs(3, 2);
        ReshardSpec spec = ReshardSpecJson.parse("""
                {"input_format": "in/s-{000..004}.tar", "output_format": "out/o-{0..9}", "output_shard_size": "1KiB",
                 "missing_shards": "abort"}""");
        ReshardException e = assertThrows(ReshardException.class,
                () -> LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run());
        assertEquals(ReshardException.Kind.MISSING_SHARDS, e.kind());
        assertTrue(e.getMessage().contains("s-003.tar") && e.getMessage().contains("s-004.tar")
                && e.getMessage().contains("2 of 5"), e.getMessage());
        assertTrue(Files.notExists(dir.resolve("out")));

        ReshardSpec warn = ReshardSpecJson.parse(ReshardSpecJson.write(spec).replace("\"abort\"", "\"warn\""));
        ReshardResult r = LocalReshard.builder(warn).baseDir(dir).workDir(dir).build().run();
        assertEquals(2, r.warnings().stream().filter(w -> w.startsWith("missing input shard")).count());
        assertEquals(6, r.creation().records());
    }

    @Test
    void corruptShardAbortsAndLeavesNothing() throws IOException {
        List<String> in = inputs(4, 3);
        byte[] bytes = Files.readAllBytes(dir.resolve(in.get(2)));
        Files.write(dir.resolve(in.get(2)), java.util.Arrays.copyOf(bytes, 1700));
        List<Path> before = tree();
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..99}").outputShardSize("2KiB").build();
        ReshardException e = assertThrows(ReshardException.class,
                () -> LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run());
        assertEquals(ReshardException.Kind.BAD_SHARD, e.kind());
        BadShardException bad = assertInstanceOf(BadShardException.class, e.getCause());
        assertEquals(dir.resolve(in.get(2)), bad.shard());
        assertTrue(e.getMessage().contains("s-002.tar") && e.getMessage().contains("byte offset"), e.getMessage());
        assertEquals(before, tree(), "no output shard, no temporary file, no work folder");

        ReshardResult skipped = LocalReshard.builder(spec).baseDir(dir).workDir(dir)
                .onError(LocalReshard.OnError.SKIP).build().run();
        assertEquals(List.of(dir.resolve(in.get(2))), skipped.skippedShards());
        assertTrue(skipped.warnings().getFirst().contains("s-002.tar"), skipped.warnings().toString());
        assertEquals(9, skipped.creation().records());
    }

    @Test
    void runningOutOfOutputNamesFailsBeforeWriting() throws IOException {
        List<String> in = inputs(2, 5);
        List<Path> before = tree();
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..2}").outputShardRecords(2).build();
        ReshardException e = assertThrows(ReshardException.class,
                () -> LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run());
        assertEquals(ReshardException.Kind.OUT_OF_NAMES, e.kind());
        assertTrue(e.getMessage().contains("gives 3 names") && e.getMessage().contains("at least 4"), e.getMessage());
        assertEquals(before, tree());
    }

    @Test
    void missingContentKeyAborts() throws IOException {
        List<String> in = inputs(2, 2);
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..9}").outputShardRecords(2)
                .algorithm(new Algorithm(Algorithm.Kind.CONTENT, false, null, ".label", Algorithm.ContentKeyType.INT))
                .build();
        ReshardException e = assertThrows(ReshardException.class,
                () -> LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run());
        assertEquals(ReshardException.Kind.CONTENT_KEY, e.kind());
        assertTrue(e.getMessage().contains("train/000-00") && e.getMessage().contains(".label"), e.getMessage());
    }

    @Test
    void dryRunPlansAndWritesNothing() throws IOException {
        List<String> in = inputs(3, 4);
        List<Path> before = tree();
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..9}.tar.gz")
                .outputShardSize("3000").dryRun(true).build();
        ReshardResult r = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();
        assertTrue(r.dryRun());
        assertEquals(4, r.outputs().size(), "12 records of 1001 bytes, 3 per shard of >= 3000 bytes");
        assertEquals(dir.resolve("out/o-0.tar.gz"), r.outputs().getFirst().path());
        assertEquals(3003, r.outputs().getFirst().contentBytes());
        assertEquals(before, tree());
    }

    @Test
    void transformChangesAndDropsRecordsAndFormatsConvert() throws IOException {
        List<String> in = inputs(2, 3);
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..9}").outputExtension(".zip")
                .outputShardRecords(10).build();
        RecordTransform t = r -> r.key().endsWith("-01") ? null
                : new Record(r.key(), List.of(r.file(".cls"), RecordFile.of(".txt", r.key().getBytes(StandardCharsets.UTF_8))));
        ReshardResult res = LocalReshard.builder(spec).baseDir(dir).workDir(dir).transform(t).build().run();
        List<Record> out = read(res.outputs().getFirst().path());
        assertEquals(List.of("train/000-00", "train/000-02", "train/001-00", "train/001-02"),
                out.stream().map(Record::key).toList());
        assertEquals(List.of(".cls", ".txt"), out.getFirst().files().stream().map(RecordFile::extension).toList());
        assertEquals(4, res.creation().records());
    }

    @Test
    void tinyMemoryBudgetSpillsAndStillProducesTheSameOutput() throws IOException {
        List<String> in = inputs(3, 5);
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..9}").outputShardSize("4KiB")
                .maxMemUsage("1").algorithm(new Algorithm(Algorithm.Kind.ALPHANUMERIC, true, null, null, null)).build();
        ReshardResult r = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();
        assertEquals(0, r.extraction().memoryBytes());
        assertTrue(r.extraction().spilledBytes() >= 15 * 1001, "all bytes went through the spill file");
        List<String> keys = new ArrayList<>();
        for (ReshardResult.OutputShard o : r.outputs()) {
            read(o.path()).forEach(x -> keys.add(x.key()));
        }
        assertEquals(keys.stream().sorted(Comparator.reverseOrder()).toList(), keys);
        assertEquals(15, keys.size());
    }

    @Test
    void sameKeyInTwoShardsIsTwoRecords() throws IOException {
        List<List<Record>> shards = List.of(
                List.of(new Record("k", List.of(RecordFile.of(".a", new byte[] {1})))),
                List.of(new Record("k", List.of(RecordFile.of(".a", new byte[] {2})))));
        List<String> in = ReshardProperties.writeInputs(dir, shards);
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).outputFormat("out/o-{0..9}").outputShardRecords(1).build();
        ReshardResult r = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();
        assertEquals(2, r.outputs().size());
        assertEquals(2, r.creation().records());
    }

    /** Shard 000 holds cats, shard 001 dogs; the key map sends each to its own templates. */
    private List<String> catsAndDogs() throws IOException {
        List<List<Record>> shards = new ArrayList<>();
        for (String animal : List.of("cat", "dog")) {
            List<Record> shard = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                shard.add(new Record(animal + "_" + i, List.of(RecordFile.of(".jpg", new byte[600]))));
            }
            shards.add(shard);
        }
        return ReshardProperties.writeInputs(dir, shards);
    }

    @Test
    void jsonKeyMapSendsRecordsToTheirTemplates() throws IOException {
        List<String> in = catsAndDogs();
        Files.writeString(dir.resolve("map.json"), """
                {"out/cats-%d.tar": ["cat_.*"], "out/dogs-{00..09}.zip": ["dog_[0-3]"]}""");
        ReshardSpec spec = ReshardSpec.builder().inputPaths(in).ekmFile("map.json").outputShardSize("1000").build();
        ReshardResult r = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();
        assertEquals(List.of("out/cats-0.tar", "out/cats-1.tar", "out/dogs-00.zip", "out/dogs-01.zip"),
                r.outputs().stream().map(o -> dir.relativize(o.path()).toString()).toList());
        assertEquals(List.of("cat_0", "cat_1"), read(r.outputs().getFirst().path()).stream().map(Record::key).toList());
        assertEquals(List.of("dog_2", "dog_3"), read(r.outputs().get(3).path()).stream().map(Record::key).toList());
    }

    @Test
    void textKeyMapWithMissingKeysAndMalformedLines() throws IOException {
        List<String> in = catsAndDogs();
        Files.writeString(dir.resolve("map.txt"), "cat_0\tout/a-{0..9}.tar\n\ncat_1\tout/a-{0..9}.tar\nnot a line\n"
                + "dog_.*\tout/d-{0..9}.tar\n");
        ReshardSpec abort = ReshardSpec.builder().inputPaths(in).ekmFile("map.txt").outputShardRecords(10).build();
        BadSpecException bad = assertThrows(BadSpecException.class,
                () -> LocalReshard.builder(abort).baseDir(dir).workDir(dir).build().run());
        assertEquals("ekm_file", bad.field());
        assertTrue(bad.getMessage().contains("line 4"), bad.getMessage());
        assertTrue(Files.notExists(dir.resolve("out")), "a bad key map fails before any work");

        ReshardSpec lenient = abort.toBuilder().ekmMalformedLine(dev.croupier.formats.Reaction.WARN).build();
        ReshardException missing = assertThrows(ReshardException.class,
                () -> LocalReshard.builder(lenient).baseDir(dir).workDir(dir).build().run());
        assertTrue(missing.getMessage().contains("cat_2") && missing.getMessage().contains("no ekm_file entry"),
                missing.getMessage());

        ReshardSpec warn = lenient.toBuilder().ekmMissingKey(dev.croupier.formats.Reaction.WARN).build();
        ReshardResult r = LocalReshard.builder(warn).baseDir(dir).workDir(dir).build().run();
        assertEquals(List.of(2L, 4L), r.outputs().stream().map(ReshardResult.OutputShard::records).toList());
        assertEquals(3, r.warnings().size(), r.warnings().toString());
    }
}
