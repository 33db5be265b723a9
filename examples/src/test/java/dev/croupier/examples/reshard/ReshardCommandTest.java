package dev.croupier.examples.reshard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.croupier.examples.MidJobKill;
import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.RecordReader;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardWriter;

/** {@code croupier reshard} in-process: options, overrides, the JSON summary, a failed job. */
@Timeout(120)
class ReshardCommandTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Writes 6 shards of 5 records (3 files each) and a spec naming them by absolute template. */
    private Path spec() throws IOException {
        Files.createDirectories(dir.resolve("in"));
        int n = 0;
        for (int s = 0; s < 6; s++) {
            try (ShardWriter w = ShardFormat.TAR.create(dir.resolve(String.format("in/s-%02d.tar", s)))) {
                for (int r = 0; r < 5; r++, n++) {
                    new Record(String.format("k%03d", n), List.of(RecordFile.of(".jpg", new byte[1000 + n]),
                            RecordFile.of(".cls", Integer.toString(n % 3).getBytes(StandardCharsets.UTF_8)),
                            RecordFile.of(".json", "{}".getBytes(StandardCharsets.UTF_8)))).writeTo(w);
                }
                w.commit();
            }
        }
        Path spec = dir.resolve("spec.json");
        Files.writeString(spec, "{\"input_format\": \"" + dir.resolve("in/s-{00..05}.tar") + "\", \"output_format\": \""
                + dir.resolve("out/o-{00..99}.tar") + "\", \"output_shard_size\": \"1MiB\"}");
        return spec;
    }

    private record Run(int code, String out) {
    }

    private Run run(String... args) throws IOException {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            int code = new ReshardCommand().run(args);
            return new Run(code, bytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(saved);
        }
    }

    private String[] common(Path spec, String... more) throws IOException {
        List<String> a = new ArrayList<>(List.of(spec.toString(), "--json", "--nodes", "2", "--store-memory", "32m",
                "--spill-dir", Files.createDirectories(dir.resolve("spill")).toString()));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    @Test
    void repeatedSetOverridesAndTransformShapeTheOutput() throws IOException {
        Path spec = spec();
        Run r = run(common(spec, "--set", "output_shard_size=10KiB", "--set", "algorithm.kind=alphanumeric",
                "--set", "algorithm.decreasing=true", "--transform", DropJsonTransform.class.getName()));
        assertEquals(0, r.code(), r.out());
        JsonNode summary = JSON.readTree(r.out());
        assertEquals(30, summary.get("extraction").get("records").asLong());
        assertEquals(30, summary.get("creation").get("records").asLong());
        List<String> keys = new ArrayList<>();
        for (JsonNode o : summary.get("outputs")) {
            try (RecordReader reader = RecordReader.open(Path.of(o.get("path").asText()))) {
                for (Record rec = reader.next(); rec != null; rec = reader.next()) {
                    keys.add(rec.key());
                    assertEquals(List.of(".jpg", ".cls"), rec.files().stream().map(RecordFile::extension).toList());
                }
            }
        }
        assertEquals(keys.stream().sorted(java.util.Comparator.reverseOrder()).toList(), keys, "decreasing order");
        assertTrue(summary.get("outputs").size() > 1, "10KiB shards: several outputs");
    }

    @Test
    void reshardOnTwoNodeProcessesWritesTheShardsOfTheEmbeddedRun() throws IOException {
        Path spec = spec();
        String spill = Files.createDirectories(dir.resolve("spill")).toString();
        List<String> shape = List.of("--json", "--store-memory", "32m", "--spill-dir", spill, "--set",
                "output_shard_size=10KiB", "--transform", DropJsonTransform.class.getName());
        List<String> embedded = new ArrayList<>(List.of(spec.toString(), "--nodes", "2", "--set",
                "output_format=" + dir.resolve("embedded/o-{00..99}.tar")));
        List<String> processes = new ArrayList<>(List.of(spec.toString(), "--processes", "2", "--set",
                "output_format=" + dir.resolve("processes/o-{00..99}.tar")));
        embedded.addAll(shape);
        processes.addAll(shape);
        Run onThreads = run(embedded.toArray(String[]::new));
        Run onProcesses = run(processes.toArray(String[]::new));
        assertEquals(0, onThreads.code(), onThreads.out());
        assertEquals(0, onProcesses.code(), onProcesses.out());
        List<String> names = shardNames(dir.resolve("embedded"));
        assertTrue(names.size() > 1, "10KiB shards: several outputs, got " + names);
        assertEquals(names, shardNames(dir.resolve("processes")));
        for (String name : names) {
            assertArrayEquals(Files.readAllBytes(dir.resolve("embedded").resolve(name)),
                    Files.readAllBytes(dir.resolve("processes").resolve(name)), name);
        }
    }

    @Test
    void aNodeProcessKilledInTheMiddleOfAReshardChangesNoByteAndIsCounted() throws IOException {
        Path spec = spec();
        String spill = Files.createDirectories(dir.resolve("spill")).toString();
        List<String> shape = List.of("--json", "--processes", "3", "--store-memory", "32m", "--spill-dir", spill,
                "--set", "output_shard_size=10KiB");
        List<String> calm = new ArrayList<>(List.of(spec.toString(), "--set",
                "output_format=" + dir.resolve("calm/o-{00..99}.tar")));
        List<String> killed = new ArrayList<>(List.of(spec.toString(), "--set",
                "output_format=" + dir.resolve("killed/o-{00..99}.tar")));
        calm.addAll(shape);
        killed.addAll(shape);
        Run calmRun = run(calm.toArray(String[]::new));
        assertEquals(0, calmRun.code(), calmRun.out());
        assertEquals(0, JSON.readTree(calmRun.out()).get("nodes_lost").asInt(), calmRun.out());
        Run killedRun;
        try (MidJobKill kill = MidJobKill.whenFirstCompletes("reshard-extract")) {
            killedRun = run(killed.toArray(String[]::new));
            assertTrue(kill.killedPid() > 0, "a node was killed in the middle of the reshard");
        }
        assertEquals(0, killedRun.code(), killedRun.out());
        JsonNode report = JSON.readTree(killedRun.out());
        assertEquals(1, report.get("nodes_lost").asInt(), killedRun.out());
        assertEquals(1, report.get("detection_seconds").size(), killedRun.out());
        assertTrue(report.has("retried_tasks") && report.has("rebuilt_objects"), killedRun.out());
        List<String> names = shardNames(dir.resolve("calm"));
        assertTrue(names.size() > 1, "10KiB shards: several outputs, got " + names);
        assertEquals(names, shardNames(dir.resolve("killed")));
        for (String name : names) {
            assertArrayEquals(Files.readAllBytes(dir.resolve("calm").resolve(name)),
                    Files.readAllBytes(dir.resolve("killed").resolve(name)), name);
        }
    }

    private static List<String> shardNames(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void dryRunWritesNothing() throws IOException {
        Run r = run(common(spec(), "--dry-run"));
        assertEquals(0, r.code(), r.out());
        JsonNode summary = JSON.readTree(r.out());
        assertTrue(summary.get("dry_run").asBoolean());
        assertEquals(1, summary.get("outputs").size());
        assertFalse(Files.exists(dir.resolve("out")));
    }

    @Test
    void corruptShardFailsWithOneJsonObjectOrIsSkipped() throws IOException {
        Path spec = spec();
        Path bad = dir.resolve("in/s-03.tar");
        byte[] all = Files.readAllBytes(bad);
        all[10] ^= 0x55; // first header's name: its checksum no longer matches
        Files.write(bad, all);
        Run failed = run(common(spec));
        assertEquals(1, failed.code());
        JsonNode error = JSON.readTree(failed.out());
        assertEquals("BAD_SHARD", error.get("kind").asText());
        assertTrue(error.get("errors").get(0).asText().contains(bad + " at byte offset 0"), failed.out());
        assertFalse(Files.exists(dir.resolve("out")) && listOut().findAny().isPresent(), "nothing written");

        Run skipped = run(common(spec, "--on-error=skip"));
        assertEquals(0, skipped.code(), skipped.out());
        JsonNode summary = JSON.readTree(skipped.out());
        assertEquals(bad.toString(), summary.get("skipped_shards").get(0).asText());
        assertEquals(25, summary.get("creation").get("records").asLong());
    }

    private Stream<Path> listOut() throws IOException {
        return Files.list(dir.resolve("out"));
    }

    @Test
    void badSpecAndBadOptionsAreNamed() throws IOException {
        Path spec = spec();
        Run r = run(common(spec, "--set", "output_shard_size=3 parsecs"));
        assertEquals(2, r.code());
        assertTrue(r.out().contains("output_shard_size"), r.out());
        assertThrows(UsageException.class, () -> run(common(spec, "--on-error=retry")));
        assertThrows(UsageException.class, () -> run(common(spec, "--set", "novalue")));
        UsageException e = assertThrows(UsageException.class, () -> ReshardCommand.transform("java.lang.String"));
        assertTrue(e.getMessage().contains("RecordTransform"), e.getMessage());
        assertThrows(UsageException.class, () -> ReshardCommand.transform("no.such.Transform"));
    }

    @Test
    void optionsKeepEveryValueOfARepeatedOption() {
        Options o = Options.parse("x", new String[] {"--set", "a=1", "--set=b=2", "f"}, Set.of(), Set.of("set"));
        assertEquals(List.of("a=1", "b=2"), o.strings("set"));
        assertEquals("b=2", o.string("set", null));
        assertEquals(List.of(), o.strings("other"));
    }

    @Test
    void progressIsOneJsonObjectPerLineOffATerminal() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        ReshardCommand.progress(false, out).update("extraction", 3, 10);
        ReshardCommand.progress(false, out).update("creation", 1, 2);
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(2, lines.length);
        JsonNode first = JSON.readTree(lines[0]);
        assertEquals("extraction", first.get("phase").asText());
        assertEquals(3, first.get("done").asLong());
        assertEquals(10, first.get("total").asLong());
    }
}
