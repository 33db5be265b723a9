package dev.croupier.shuffle.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.croupier.formats.BadShardException;
import dev.croupier.formats.Reaction;
import dev.croupier.formats.Record;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardReader;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.BadSpecException;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.ReshardException;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;

/** The bad inputs of issue 6, on the distributed job. */
@Timeout(120)
class ReshardJobBadInputTest {

    @TempDir
    Path dir;

    private Cluster cluster;

    @BeforeEach
    void start() throws IOException {
        cluster = ReshardFixtures.cluster(2, dir.resolve("work"));
    }

    @AfterEach
    void stop() {
        assertEquals(0, cluster.objectCount(), "every object released");
        cluster.close();
    }

    private List<List<Record>> threeShards() throws IOException {
        List<List<Record>> shards = ReshardFixtures.records(List.of(6, 6, 6), 3000, 7);
        ReshardFixtures.writeInputs(dir, shards);
        return shards;
    }

    /** The three shards of {@link #threeShards()} into 4 KiB tar shards; a test changes what it needs. */
    private static ReshardSpec.Builder spec() {
        return ReshardSpec.builder().inputFormat("in/s-{000..002}.tar").outputFormat("out/o-{000..999}.tar")
                .outputShardSize("4KiB");
    }

    private ReshardJob.Builder job(ReshardSpec.Builder spec) {
        return ReshardJob.builder(spec.build()).baseDir(dir);
    }

    private ReshardJob.Builder job() {
        return job(spec());
    }

    @Test
    void missingShardIsNamedBeforeAnyTaskRuns() throws IOException {
        threeShards();
        ReshardException e = assertThrows(ReshardException.class, () -> job(spec().inputFormat("in/s-{000..004}.tar")
                .missingShards(Reaction.ABORT)).build().run(cluster));
        assertEquals(ReshardException.Kind.MISSING_SHARDS, e.kind());
        assertTrue(e.getMessage().contains("s-003.tar") && e.getMessage().contains("s-004.tar"), e.getMessage());
        assertEquals(0, cluster.stats().totalTasks(), "no task ran");
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
    }

    @Test
    void missingShardWithWarnIsListedAndTheRestIsResharded() throws IOException {
        List<List<Record>> shards = threeShards();
        ReshardResult r = job(spec().inputFormat("in/s-{000..003}.tar").missingShards(Reaction.WARN)).build().run(cluster);
        assertEquals(1, r.warnings().size(), r.warnings().toString());
        assertTrue(r.warnings().getFirst().contains("s-003.tar"), r.warnings().toString());
        assertEquals(shards.stream().mapToLong(List::size).sum(), r.creation().records());
    }

    @Test
    void corruptShardFailsNamingShardAndOffsetAndLeavesNothing() throws IOException {
        threeShards();
        Path bad = corrupt(dir.resolve("in/s-001.tar"));
        ReshardException e = assertThrows(ReshardException.class, () -> job().build().run(cluster));
        assertEquals(ReshardException.Kind.BAD_SHARD, e.kind());
        assertTrue(e.getMessage().contains(bad.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("byte offset 1024"), e.getMessage());
        assertInstanceOf(BadShardException.class, e.getCause());
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
    }

    @Test
    void corruptShardIsSkippedAndListedWithOnErrorSkip() throws IOException {
        List<List<Record>> shards = threeShards();
        Path bad = corrupt(dir.resolve("in/s-001.tar"));
        ReshardResult r = job().onError(LocalReshard.OnError.SKIP).build().run(cluster);
        assertEquals(List.of(bad), r.skippedShards());
        assertEquals(1, r.warnings().size(), r.warnings().toString());
        assertTrue(r.warnings().getFirst().contains(bad.toString()) && r.warnings().getFirst().contains("byte offset 1024"),
                r.warnings().toString());
        assertEquals(2, r.extraction().shards());
        List<Record> written = new ArrayList<>();
        for (ReshardResult.OutputShard o : r.outputs()) {
            written.addAll(ReshardFixtures.read(o.path()));
        }
        List<String> expected = new ArrayList<>();
        for (int s : List.of(0, 2)) {
            shards.get(s).forEach(rec -> expected.add(rec.key()));
        }
        assertEquals(expected.stream().sorted().toList(), written.stream().map(Record::key).sorted().toList());
    }

    @Test
    void failureDuringCreationLeavesNoOutputAndNoTemporaryFile() throws IOException {
        List<List<Record>> shards = threeShards();
        String victim = shards.get(2).get(3).key();
        ReshardException e = assertThrows(ReshardException.class, () -> job(spec().outputShardSize("1KiB")).transform(rec -> {
            if (rec.key().equals(victim)) {
                throw new IllegalStateException("transform refuses " + victim);
            }
            return rec;
        }).build().run(cluster));
        assertEquals(ReshardException.Kind.TRANSFORM, e.kind());
        assertTrue(e.getMessage().contains(victim), e.getMessage());
        assertTrue(Files.isDirectory(dir.resolve("out")), "creation had started");
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")), "no output and no temporary file");
    }

    @Test
    void memberClimbingOutOfTheShardIsRefusedAndNeverWritten() throws IOException {
        threeShards();
        Path slip = dir.resolve("in/s-002.tar");
        try (OutputStream f = Files.newOutputStream(slip); TarArchiveOutputStream t = new TarArchiveOutputStream(f)) {
            for (String n : List.of("ok/0001.jpg", "../../evil.jpg")) {
                TarArchiveEntry entry = new TarArchiveEntry(n, true);
                entry.setSize(3);
                t.putArchiveEntry(entry);
                t.write(new byte[] {1, 2, 3});
                t.closeArchiveEntry();
            }
        }
        ReshardException e = assertThrows(ReshardException.class, () -> job().build().run(cluster));
        assertEquals(ReshardException.Kind.BAD_SHARD, e.kind());
        assertTrue(e.getMessage().contains(slip.toString()) && e.getMessage().contains("../../evil.jpg"), e.getMessage());
        assertFalse(Files.exists(dir.getParent().resolve("evil.jpg")));
        assertFalse(Files.exists(dir.resolve("evil.jpg")));
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
    }

    /** Writes s-000.tar with k/0001.jpg twice (2 then 5 bytes) and s-001.tar with k/0001 again. */
    private void duplicates() throws IOException {
        Files.createDirectories(dir.resolve("in"));
        Map<String, List<String>> members = Map.of("in/s-000.tar", List.of("k/0001.jpg", "k/0001.cls", "k/0001.jpg"),
                "in/s-001.tar", List.of("k/0001.jpg"));
        for (Map.Entry<String, List<String>> shard : members.entrySet()) {
            try (OutputStream f = Files.newOutputStream(dir.resolve(shard.getKey()));
                 TarArchiveOutputStream t = new TarArchiveOutputStream(f)) {
                int size = 2;
                for (String n : shard.getValue()) {
                    TarArchiveEntry entry = new TarArchiveEntry(n, true);
                    entry.setSize(size);
                    t.putArchiveEntry(entry);
                    t.write(new byte[size]);
                    t.closeArchiveEntry();
                    size += 3;
                }
            }
        }
    }

    @Test
    void duplicateFileInOneShardFollowsTheReaction() throws IOException {
        duplicates();
        ReshardSpec.Builder spec = ReshardSpec.builder().inputFormat("in/s-{000..001}.tar")
                .outputFormat("out/o-{000..999}.tar").outputShardRecords(10);

        ReshardException e = assertThrows(ReshardException.class,
                () -> job(spec.duplicatedRecords(Reaction.ABORT)).build().run(cluster));
        assertEquals(ReshardException.Kind.BAD_SHARD, e.kind());
        assertTrue(e.getMessage().contains("s-000.tar") && e.getMessage().contains("k/0001.jpg"), e.getMessage());
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));

        ReshardResult warned = job(spec.duplicatedRecords(Reaction.WARN)).build().run(cluster);
        assertEquals(1, warned.warnings().size(), warned.warnings().toString());
        assertTrue(warned.warnings().getFirst().contains("k/0001.jpg"), warned.warnings().toString());
        // The same key in two input shards is two records; within s-000 the later .jpg (8 bytes) replaced the first.
        assertEquals(2, warned.creation().records());
        assertEquals(List.of("k/0001.cls:5", "k/0001.jpg:8", "k/0001.jpg:2"), members(warned.outputs().getFirst().path()));

        ReshardResult ignored = job(spec.duplicatedRecords(Reaction.IGNORE)).build().run(cluster);
        assertEquals(List.of(), ignored.warnings());
        assertEquals(2, ignored.creation().records());
    }

    @Test
    void missingContentKeyAbortsTheJob() throws IOException {
        threeShards();
        ReshardException e = assertThrows(ReshardException.class, () -> job(spec()
                .algorithm(new Algorithm(Algorithm.Kind.CONTENT, false, null, ".txt", Algorithm.ContentKeyType.INT)))
                .sortPartitions(3).build().run(cluster));
        assertEquals(ReshardException.Kind.CONTENT_KEY, e.kind());
        assertTrue(e.getMessage().contains(".txt"), e.getMessage());
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
    }

    @Test
    void outOfOutputNamesSaysHowManyWereNeeded() throws IOException {
        threeShards();
        ReshardException e = assertThrows(ReshardException.class,
                () -> job(ReshardSpec.builder().inputFormat("in/s-{000..002}.tar")
                        .outputFormat("out/o-{0..1}.tar").outputShardRecords(2))
                        .build().run(cluster));
        assertEquals(ReshardException.Kind.OUT_OF_NAMES, e.kind());
        assertTrue(e.getMessage().contains("9 output shards"), e.getMessage());
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
    }

    @Test
    void dryRunPlansWhatARealRunWritesAndWritesNothing() throws IOException {
        threeShards();
        ReshardResult plan = job(spec().dryRun(true)).build().run(cluster);
        assertTrue(plan.dryRun());
        assertEquals(List.of(), ReshardFixtures.listFiles(dir.resolve("out")));
        ReshardResult real = job().build().run(cluster);
        assertEquals(real.outputs().size(), plan.outputs().size());
        for (int i = 0; i < real.outputs().size(); i++) {
            assertEquals(real.outputs().get(i).path(), plan.outputs().get(i).path());
            assertEquals(real.outputs().get(i).records(), plan.outputs().get(i).records());
            assertEquals(real.outputs().get(i).contentBytes(), plan.outputs().get(i).contentBytes());
        }
    }

    @Test
    void badSpecFieldIsNamedBeforeAJobIsBuilt() {
        BadSpecException e = assertThrows(BadSpecException.class, () -> job(spec().outputShardSize("12 parsecs")));
        assertTrue(e.getMessage().contains("output_shard_size") && e.getMessage().contains("12 parsecs"), e.getMessage());
    }

    @Test
    void badBuilderKnobIsBadInputNamingTheKnob() {
        CroupierException range = assertThrows(CroupierException.class, () -> job().sortPartitions(-1).build());
        assertEquals(ErrorCode.BAD_INPUT, range.code());
        assertTrue(range.getMessage().contains("ReshardJob.Builder.sortPartitions = -1")
                && range.getMessage().contains("0..1000000"), range.getMessage());
        CroupierException missing = assertThrows(CroupierException.class, () -> job().transform(null).build());
        assertEquals(ErrorCode.BAD_INPUT, missing.code());
        assertTrue(missing.getMessage().contains("ReshardJob.Builder.transform = null"), missing.getMessage());
    }

    /** Member names and sizes, read file by file (the output holds one key twice, which a record reader refuses). */
    private static List<String> members(Path shard) throws IOException {
        List<String> out = new ArrayList<>();
        try (ShardReader r = ShardFormat.forPath(shard).open(shard)) {
            while (r.nextFile()) {
                out.add(r.name() + ":" + r.size());
            }
        }
        return out;
    }

    /** Flips a byte in the second member's header (after the 1-byte .cls file: 512 + 512) so its checksum fails. */
    private static Path corrupt(Path shard) throws IOException {
        byte[] all = Files.readAllBytes(shard);
        all[1024 + 10] ^= 0x55;
        Files.write(shard, all);
        return shard;
    }
}
