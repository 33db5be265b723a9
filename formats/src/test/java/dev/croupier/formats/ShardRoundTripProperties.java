package dev.croupier.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Every format reads back byte-identical what it wrote: keys, extensions, order and content.
 * Keys include dotted directories, long (> 100 byte) paths and non-ASCII names, which exercise
 * tar's pax headers.
 */
class ShardRoundTripProperties {

    @Property(tries = 25)
    void namedFormatsRoundTrip(@ForAll("named") ShardFormat format, @ForAll("records") List<Record> records)
            throws IOException {
        Path dir = Files.createTempDirectory("roundtrip");
        try {
            Path shard = ShardFiles.write(format, dir.resolve("shard" + format.defaultExtension()), records);
            assertEquals(ShardFiles.describe(records), ShardFiles.describe(ShardFiles.read(shard)));
            assertEquals(List.of(shard.getFileName().toString()), ShardFiles.listNames(dir), "no temp file left");
        } finally {
            ShardFiles.deleteTree(dir);
        }
    }

    @Property(tries = 20)
    void tfRecordRoundTripsPayloads(@ForAll("payloads") List<byte[]> payloads) throws IOException {
        List<Record> records = new ArrayList<>();
        for (int i = 0; i < payloads.size(); i++) {
            records.add(new Record(String.format("%012d", i), List.of(RecordFile.of(".tfrecord", payloads.get(i)))));
        }
        roundTrip(ShardFormat.TFRECORD, records);
    }

    @Property(tries = 20)
    void sortBenchmarkRoundTrips(@ForAll("sortRecords") List<byte[]> raw) throws IOException {
        List<Record> records = new ArrayList<>();
        for (byte[] r : raw) {
            String key = HexFormat.of().formatHex(r, 0, 10);
            records.add(new Record(key, List.of(new RecordFile(".value", ByteBuffer.wrap(r, 10, 90)))));
        }
        roundTrip(ShardFormat.SORT_BENCHMARK, records);
    }

    private static void roundTrip(ShardFormat format, List<Record> records) throws IOException {
        Path dir = Files.createTempDirectory("roundtrip");
        try {
            Path shard = ShardFiles.write(format, dir.resolve("s" + format.defaultExtension()), records);
            List<Record> back = new ArrayList<>();
            try (ShardReader r = format.open(shard)) {
                while (r.nextFile()) {
                    back.add(new Record(r.key(), List.of(new RecordFile(r.extension(), r.readContent()))));
                }
            }
            assertEquals(ShardFiles.describe(records), ShardFiles.describe(back));
        } finally {
            ShardFiles.deleteTree(dir);
        }
    }

    @Provide
    Arbitrary<ShardFormat> named() {
        return Arbitraries.of(ShardFormat.TAR, ShardFormat.TAR_GZ, ShardFormat.TAR_LZ4, ShardFormat.ZIP,
                ShardFormat.MSGPACK);
    }

    @Provide
    Arbitrary<List<Record>> records() {
        Arbitrary<String> segment = Arbitraries.strings().withChars("abcxyz019-_").ofMinLength(1).ofMaxLength(12);
        Arbitrary<String> dir = Combinators.combine(segment, Arbitraries.of("", ".d", ".v1.2"))
                .as((s, d) -> s + d);
        Arbitrary<String> longDir = Arbitraries.of("", "", "", "l" + "o".repeat(120) + "ng/", "caf\u00e9-\u00fc/");
        Arbitrary<String> key = Combinators.combine(longDir, dir.list().ofMaxSize(3), segment)
                .as((l, ds, base) -> l + (ds.isEmpty() ? "" : String.join("/", ds) + "/") + base);
        Arbitrary<List<String>> extensions = Arbitraries.of(".jpg", ".cls", ".json", ".seg.png", ".txt", "")
                .list().ofMinSize(1).ofMaxSize(3).uniqueElements();
        Arbitrary<byte[]> content = Arbitraries.bytes().array(byte[].class).ofMaxSize(3000);
        Arbitrary<Record> record = Combinators.combine(key, extensions, content.list().ofSize(3))
                .as((k, exts, contents) -> {
                    List<RecordFile> files = new ArrayList<>();
                    for (int i = 0; i < exts.size(); i++) {
                        files.add(RecordFile.of(exts.get(i), contents.get(i)));
                    }
                    return new Record(k, files);
                });
        return record.list().ofMaxSize(12).uniqueElements(Record::key);
    }

    @Provide
    Arbitrary<List<byte[]>> payloads() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(5000).list().ofMaxSize(15);
    }

    @Provide
    Arbitrary<List<byte[]>> sortRecords() {
        return Arbitraries.bytes().array(byte[].class).ofSize(100).list().ofMaxSize(40);
    }
}
