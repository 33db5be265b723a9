package dev.croupier.formats.reshard.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.BadShardException;
import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.ReshardException;
import dev.croupier.formats.reshard.ReshardSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver steps both runners share ({@link ReshardDriver}), one by one: what each checks,
 * and the messages and warnings both runners give.
 */
class ReshardDriverTest {

    @TempDir
    Path dir;

    private final List<String> warnings = new ArrayList<>();

    private ReshardDriver driver(ReshardSpec spec, LocalReshard.OnError onError) {
        return new ReshardDriver(spec, dir, onError, warnings::add);
    }

    private ReshardSpec.Builder twoInputs() throws IOException {
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(dir.resolve("in/a.tar"), "");
        return ReshardSpec.builder().inputPaths(List.of("in/a.tar", "in/b.tar")).outputFormat("out/o-{0..2}")
                .outputShardRecords(2);
    }

    @Test
    void missingInputsAbortNamingAllOrWarnOrPassAsTheSpecSays() throws IOException {
        ReshardException e = assertThrows(ReshardException.class,
                () -> driver(twoInputs().missingShards(Reaction.ABORT).build(), LocalReshard.OnError.ABORT).checkInputs());
        assertEquals(ReshardException.Kind.MISSING_SHARDS, e.kind());
        assertTrue(e.getMessage().contains("1 of 2") && e.getMessage().contains("b.tar"), e.getMessage());

        assertEquals(List.of(dir.resolve("in/a.tar")),
                driver(twoInputs().missingShards(Reaction.WARN).build(), LocalReshard.OnError.ABORT).checkInputs());
        assertEquals(List.of("missing input shard " + dir.resolve("in/b.tar")), warnings);

        warnings.clear();
        driver(twoInputs().missingShards(Reaction.IGNORE).build(), LocalReshard.OnError.ABORT).checkInputs();
        assertEquals(List.of(), warnings);
    }

    @Test
    void outputsAreNamedByTheTemplateAndNamesRunningOutFailsSayingHowMany() throws IOException {
        ReshardDriver d = driver(twoInputs().build(), LocalReshard.OnError.ABORT);
        assertNull(d.readKeyMap());
        d.checkNames(new long[] {3});
        assertEquals(new ReshardDriver.OutputName(dir.resolve("out/o-2.tar"), ShardFormat.TAR), d.output(0, 2));
        ReshardException e = assertThrows(ReshardException.class, () -> d.checkNames(new long[] {5}));
        assertEquals(ReshardException.Kind.OUT_OF_NAMES, e.kind());
        assertTrue(e.getMessage().contains("output_format 'out/o-{0..2}' gives 3 names")
                && e.getMessage().contains("5 output shards") && e.getMessage().contains("at least 4"), e.getMessage());
    }

    @Test
    void aKeyMapNamesOutputsPerTemplateWithTheFormatTheNameSays() throws IOException {
        Files.writeString(dir.resolve("map.json"), "{\"cats-{0..1}.tar\": [\"^cat\"], \"dogs-{0..9}.zip\": [\"^dog\"]}");
        ReshardDriver d = driver(twoInputs().ekmFile("map.json").build(), LocalReshard.OnError.ABORT);
        assertEquals(2, d.readKeyMap().templates().size());
        d.checkNames(new long[] {2, 10});
        assertEquals(new ReshardDriver.OutputName(dir.resolve("dogs-7.zip"), ShardFormat.ZIP), d.output(1, 7));
        ReshardException e = assertThrows(ReshardException.class, () -> d.checkNames(new long[] {3, 1}));
        assertTrue(e.getMessage().startsWith("ekm_file template 'cats-{0..1}.tar' gives 2 names but 3 output shards"),
                e.getMessage());
    }

    @Test
    void anUnmappedRecordAbortsWarnsOrIsDropped() {
        RecordMeta m = new RecordMeta("cow_1", 10, 4, 0, null, 0);
        ReshardException e = assertThrows(ReshardException.class,
                () -> ReshardDriver.unmapped(m, -1, Reaction.ABORT, warnings::add));
        assertEquals(ReshardException.Kind.CONTENT_KEY, e.kind());
        assertEquals("record 'cow_1' (input shard #4) matches no ekm_file entry", e.getMessage());
        ReshardDriver.unmapped(m, -2, Reaction.WARN, warnings::add);
        ReshardDriver.unmapped(m, -1, Reaction.IGNORE, warnings::add);
        assertEquals(List.of("record 'cow_1' (input shard #4) matches more than one ekm_file entry; dropped"), warnings);
    }

    @Test
    void onlyACorruptShardIsSkippedAndOnlyWhenAsked() throws IOException {
        Path shard = dir.resolve("in/a.tar");
        BadShardException bad = new BadShardException(BadShardException.Cause.TRUNCATED, shard, 512, null, "ends early",
                null);
        Exception wrapped = new ExecutionException(bad);
        assertFalse(driver(twoInputs().build(), LocalReshard.OnError.ABORT).skip(shard, wrapped));
        ReshardDriver skipping = driver(twoInputs().build(), LocalReshard.OnError.SKIP);
        assertFalse(skipping.skip(shard, new IOException("disk on fire")));
        assertTrue(skipping.skip(shard, wrapped));
        assertEquals(List.of(shard), skipping.skipped());
        assertEquals(List.of("skipped input shard " + shard + ": " + bad.getMessage()), warnings);
    }

    @Test
    void failuresBecomeTypedErrorsNamingTheCauseInsideWrappers() {
        ReshardException own = new ReshardException(ReshardException.Kind.OUT_OF_NAMES, "no names");
        assertSame(own, ReshardDriver.failure("x", new ExecutionException(own), ExecutionException.class));

        BadShardException bad = new BadShardException(BadShardException.Cause.BAD_HEADER, Path.of("s.tar"), 0, null,
                "not a tar", null);
        ReshardException b = ReshardDriver.failure("extracting s.tar", new ExecutionException(bad), ExecutionException.class);
        assertEquals(ReshardException.Kind.BAD_SHARD, b.kind());
        assertEquals("failed extracting s.tar: " + bad.getMessage(), b.getMessage());

        IOException io = new IOException("disk on fire");
        ReshardException i = ReshardDriver.failure("creating o-1", new ExecutionException(io), ExecutionException.class);
        assertEquals(ReshardException.Kind.IO, i.kind());
        assertEquals("failed creating o-1: " + io, i.getMessage());
    }
}
