package dev.croupier.formats.reshard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.croupier.formats.Reaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReshardSpecTest {

    @Test
    void parsesEveryFieldAndFillsDefaults() {
        ReshardSpec s = ReshardSpecJson.parse("""
                {"input_format": "in/train-{0000..0099}.tar",
                 "output_format": "out/shard-{00..09}",
                 "output_shard_size": "256KiB",
                 "algorithm": {"kind": "shuffle", "seed": "42"},
                 "max_mem_usage": "50%", "extract_concurrency_max_limit": 3, "create_concurrency_max_limit": 2,
                 "duplicated_records": "warn", "missing_shards": "abort", "dry_run": true, "description": "d"}""");
        assertEquals(100, s.inputShards(Path.of("/b")).size());
        assertEquals(Path.of("/b/in/train-0042.tar"), s.inputShards(Path.of("/b")).get(42));
        assertEquals(".tar", s.inputExtension());
        assertEquals(".tar", s.outputExtension(), "output extension defaults to the input's");
        assertEquals(Path.of("/b/out/shard-07.tar"), s.outputShard(7, Path.of("/b")));
        assertEquals(256 * 1024, s.outputShardSize());
        assertEquals(-1, s.outputShardRecords());
        assertEquals(new Algorithm(Algorithm.Kind.SHUFFLE, false, 42L, null, null), s.algorithm());
        assertEquals(new MemoryLimit(50, 0), s.maxMemUsage());
        assertEquals(3, s.extractConcurrencyMaxLimit());
        assertEquals(2, s.createConcurrencyMaxLimit());
        assertEquals(Reaction.WARN, s.duplicatedRecords());
        assertEquals(Reaction.ABORT, s.missingShards());
        assertTrue(s.dryRun());

        ReshardSpec d = ReshardSpecJson.parse("""
                {"input_format": ["a", "/abs/b.tar.gz"], "output_format": "o-{0..9}.zip", "output_shard_records": 5}""");
        assertEquals(List.of(Path.of("/b/a.tar"), Path.of("/abs/b.tar.gz")), d.inputShards(Path.of("/b")),
                "names without a known extension get input_extension; absolute names stay as they are");
        assertEquals(".zip", d.outputExtension());
        assertEquals(Algorithm.DEFAULT, d.algorithm());
        assertEquals(MemoryLimit.DEFAULT, d.maxMemUsage());
        assertEquals(ReshardSpec.DEFAULT_DUPLICATED_RECORDS, d.duplicatedRecords());
        assertEquals(ReshardSpec.DEFAULT_MISSING_SHARDS, d.missingShards());
        assertFalse(d.dryRun());
    }

    @Test
    void writtenJsonParsesBackToTheSameSpec() {
        ReshardSpec s = ReshardSpecJson.parse("""
                {"input_format": "in-{0..3}.tar", "output_format": "o-{0..9}", "output_extension": ".tar.lz4",
                 "output_shard_size": "1MB", "algorithm": {"kind": "content", "extension": ".cls",
                 "content_key_type": "int", "decreasing": true}}""");
        assertEquals(ReshardSpecJson.write(s), ReshardSpecJson.write(ReshardSpecJson.parse(ReshardSpecJson.write(s))));
        assertEquals(ReshardSpecJson.write(s), ReshardSpecJson.write(s.toBuilder().build()));
    }

    @Test
    void overridesSetFieldsAsTheCliDoes() {
        ReshardSpec s = ReshardSpecJson.parse("{\"input_format\": \"a.tar\", \"output_format\": \"o-{0..9}\", "
                        + "\"output_shard_size\": \"1KiB\"}",
                Map.of("output_shard_size", "1MiB", "algorithm.kind", "md5", "extract_concurrency_max_limit", "4"));
        assertEquals(1 << 20, s.outputShardSize());
        assertEquals(Algorithm.Kind.MD5, s.algorithm().kind());
        assertEquals(4, s.extractConcurrencyMaxLimit());
    }

    @Test
    void overrideWithTrailingTextIsTextAndRefusedNotReadAsItsLeadingNumber() {
        BadSpecException e = assertThrows(BadSpecException.class, () -> ReshardSpecJson.parse(
                "{\"input_format\": \"a.tar\", \"output_format\": \"o-{0..9}\"}",
                Map.of("output_shard_size", "3 parsecs")));
        assertTrue(e.getMessage().contains("output_shard_size") && e.getMessage().contains("3 parsecs"), e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "unknown field         | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"bogus\":1}                          | bogus | 1",
        "bad template          | {\"input_format\":\"a-{1..}.tar\",\"output_format\":\"o-{0..1}\"}                               | input_format | a-{1..}.tar",
        "unclosed brace        | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1\"}                                      | output_format | o-{0..1",
        "start after end       | {\"input_format\":\"a-{9..1}.tar\",\"output_format\":\"o-{0..1}\"}                              | input_format | a-{9..1}.tar",
        "zero step             | {\"input_format\":\"a-{0..8..0}.tar\",\"output_format\":\"o-{0..1}\"}                           | input_format | a-{0..8..0}.tar",
        "unknown size unit     | {\"input_format\":\"a.tar\",\"output_format\":\"o\",\"output_shard_size\":\"10XB\"}             | output_shard_size | 10XB",
        "non-integer seed      | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"algorithm\":{\"kind\":\"shuffle\",\"seed\":\"1.5\"}} | algorithm.seed | 1.5",
        "unknown kind          | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"algorithm\":{\"kind\":\"random\"}} | algorithm.kind | random",
        "content without ext   | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"algorithm\":{\"kind\":\"content\",\"content_key_type\":\"int\"}} | algorithm.extension | ",
        "bad key type          | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"algorithm\":{\"kind\":\"content\",\"extension\":\".x\",\"content_key_type\":\"date\"}} | algorithm.content_key_type | date",
        "bad reaction          | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"missing_shards\":\"panic\"}        | missing_shards | panic",
        "conflicting extension | {\"input_format\":\"a-{0..1}.tar\",\"input_extension\":\".zip\",\"output_format\":\"o-{0..1}\"} | input_extension | .zip",
        "unknown extension     | {\"input_format\":\"a\",\"input_extension\":\".rar\",\"output_format\":\"o-{0..1}\"}            | input_extension | .rar",
        "bad memory            | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"max_mem_usage\":\"150%\"}          | max_mem_usage | 150%",
        "negative concurrency  | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"create_concurrency_max_limit\":-1} | create_concurrency_max_limit | -1",
        "size and records      | {\"input_format\":\"a.tar\",\"output_format\":\"o\",\"output_shard_size\":\"1\",\"output_shard_records\":2} | output_shard_records | 2",
        "unbounded, no size    | {\"input_format\":\"a.tar\",\"output_format\":\"o\"}                                            | output_shard_size | ",
        "missing input         | {\"output_format\":\"o-{0..1}\"}                                                                | input_format | ",
        "bad ekm reaction      | {\"input_format\":\"a.tar\",\"output_format\":\"o-{0..1}\",\"ekm_missing_key\":\"maybe\"}      | ekm_missing_key | maybe",
        "two %d in template    | {\"input_format\":\"a.tar\",\"output_format\":\"o-%d-%d\",\"output_shard_size\":\"1\"}       | output_format | o-%d-%d",
        "%d without a size     | {\"input_format\":\"a.tar\",\"output_format\":\"o-%06d\"}                                    | output_shard_size | ",
        "climbing output       | {\"input_format\":\"a.tar\",\"output_format\":\"../o-{0..1}\"}                                  | output_format | ../o-{0..1}",
    })
    void badSpecNamesFieldAndValue(String title, String json, String field, String value) {
        BadSpecException e = assertThrows(BadSpecException.class, () -> ReshardSpecJson.parse(json));
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(field), e.getMessage());
        if (value != null) {
            assertTrue(e.getMessage().contains(value), e.getMessage());
        }
    }

    @Test
    void builderValidatesLikeJson() {
        BadSpecException e = assertThrows(BadSpecException.class, () -> ReshardSpec.builder()
                .inputFormat("a.tar").outputFormat("o-{0..3}").outputShardSize("5 parsecs").build());
        assertEquals("output_shard_size", e.field());
        assertEquals("5 parsecs", e.value());
        assertEquals("algorithm.seed", assertThrows(BadSpecException.class,
                () -> ReshardSpecJson.seed("algorithm.seed", "twelve")).field());
        ReshardSpec ok = ReshardSpec.builder().inputPaths(List.of("x.tar")).outputFormat("o-{0..3}")
                .outputShardSize("2GiB").build();
        assertEquals(2L << 30, ok.outputShardSize());
    }

    @Test
    void runningOutOfOutputNamesSaysHowManyWereNeeded() {
        ReshardSpec s = ReshardSpecJson.parse("{\"input_format\":\"a.tar\",\"output_format\":\"o-{0..9}\",\"output_shard_size\":\"1\"}");
        ReshardException e = assertThrows(ReshardException.class, () -> s.outputShard(12, Path.of("/")));
        assertEquals(ReshardException.Kind.OUT_OF_NAMES, e.kind());
        assertTrue(e.getMessage().contains("gives 10 names") && e.getMessage().contains("13"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"10240,10240", "256KiB,262144", "1GB,1000000000", "1.5MiB,1572864", "7 b,7", "2tib,2199023255552"})
    void sizes(String text, long bytes) {
        assertEquals(bytes, ByteSize.parse("f", text));
    }

    @Test
    void templatesExpandLikeDsortBashTemplates() {
        assertEquals(List.of("p-0010-s", "p-0012-s", "p-0014-s"),
                NameTemplate.parse("f", "p-{0010..0014..2}-s").expand("f", 100));
        assertEquals(List.of("a0-b8", "a0-b9", "a0-b10", "a1-b8", "a1-b9", "a1-b10"),
                NameTemplate.parse("f", "a{0..1}-b{8..10}").expand("f", 100), "odometer, last range fastest");
        assertEquals("x-05", NameTemplate.parse("f", "x-{00..99}").name(5), "width = min(len(start), len(end))");
        assertEquals("x-5", NameTemplate.parse("f", "x-{0..100}").name(5));
        assertEquals(List.of("plain.tar"), NameTemplate.parse("f", "plain.tar").expand("f", 1));
        assertEquals(11, NameTemplate.parse("f", "{0..10}").count());
        NameTemplate fmt = NameTemplate.parse("f", "shard-%06d.tar");
        assertEquals("shard-000042.tar", fmt.name(42));
        assertFalse(fmt.bounded());
        assertEquals("c-7", NameTemplate.parse("f", "c-%d").name(7));
        NameTemplate at = NameTemplate.parse("f", "p-@00100-gap-@9.tar");
        assertEquals(101 * 10, at.count());
        assertEquals("p-00001-gap-3.tar", at.name(13));
        assertEquals("p-@00100-gap-@9.tar", at.text());
    }
}
