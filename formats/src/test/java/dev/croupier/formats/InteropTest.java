package dev.croupier.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Shards written by other tools read correctly (fixtures made by GNU tar, Python's tarfile and
 * zipfile, a hand-rolled TFRecord and msgpack writer: see fixtures/make-fixtures.py), and shards
 * we write are read back by GNU tar, lz4 and unzip.
 */
class InteropTest {
    private static final String LONG_DIR = "deep/" + "long-directory-name-".repeat(6) + "end";
    /** The members of every fixture, in stored order (mirrors NAMES in make-fixtures.py). */
    static final List<String> NAMES = List.of(
            "s/0001.jpg", "s/0001.cls", "s/0002.jpg", "s/0002.cls",
            "dots.in.dir/0003.seg.png", "dots.in.dir/0003.json",
            LONG_DIR + "/0004.jpg", LONG_DIR + "/0004.cls", "s/caf\u00e9-0005.txt");

    /** content(name) of make-fixtures.py. */
    static byte[] content(String name) {
        int codePoints = name.codePointCount(0, name.length());
        return ("content of " + name + "\n").repeat(1 + codePoints % 7).getBytes(StandardCharsets.UTF_8);
    }

    static Path fixture(String name) {
        try {
            return Path.of(InteropTest.class.getResource("/fixtures/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"py-ustar.tar", "py-gnu.tar", "py-pax.tar", "py-pax.tar.gz", "gnu-gnu.tar",
            "gnu-posix.tar", "gnu-posix.tar.lz4", "py-stored.zip", "py-deflated.zip", "py.msgpack"})
    void readsForeignShards(String fixture) throws IOException {
        List<Record> records = ShardFiles.read(fixture(fixture));
        List<String> names = new ArrayList<>();
        for (Record r : records) {
            for (RecordFile f : r.files()) {
                String name = r.key() + f.extension();
                names.add(name);
                assertArrayEquals(content(name), ShardFiles.bytes(f), fixture + ": " + name);
            }
        }
        assertEquals(NAMES, names, "directories and symlinks are skipped, order kept");
        assertEquals(List.of("s/0001", "s/0002", "dots.in.dir/0003", LONG_DIR + "/0004", "s/caf\u00e9-0005"),
                records.stream().map(Record::key).toList(), "adjacent files of one key form one record");
        assertEquals(List.of(".seg.png", ".json"),
                records.get(2).files().stream().map(RecordFile::extension).toList());
    }

    @Test
    void readsForeignTfRecordAndChecksItsCrcs() throws IOException {
        List<byte[]> payloads = new ArrayList<>();
        try (ShardReader r = ShardFormat.TFRECORD.open(fixture("py.tfrecord"))) {
            while (r.nextFile()) {
                payloads.add(r.readContent().array());
            }
        }
        assertEquals(NAMES.size(), payloads.size());
        for (int i = 0; i < NAMES.size(); i++) {
            assertArrayEquals(content(NAMES.get(i)), payloads.get(i));
        }
    }

    private static Map<String, byte[]> sampleFiles() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        for (String n : NAMES) {
            files.put(n, content(n));
        }
        files.put("big/0006.bin", new byte[300_000]);
        return files;
    }

    private static Path writeSample(ShardFormat format, Path dir) throws IOException {
        Map<String, List<RecordFile>> byKey = new LinkedHashMap<>();
        sampleFiles().forEach((n, b) -> byKey.computeIfAbsent(MemberNames.key(n), k -> new ArrayList<>())
                .add(RecordFile.of(MemberNames.extension(n), b)));
        List<Record> records = new ArrayList<>();
        byKey.forEach((k, fs) -> records.add(new Record(k, fs)));
        return ShardFiles.write(format, dir.resolve("ours" + format.defaultExtension()), records);
    }

    @ParameterizedTest
    @EnumSource(value = ShardFormat.class, names = {"TAR", "TAR_GZ", "TAR_LZ4", "ZIP"})
    @Timeout(120)
    void externalToolsReadOurShards(ShardFormat format, @TempDir Path dir) throws Exception {
        Path shard = writeSample(format, dir);
        Path out = Files.createDirectory(dir.resolve("out"));
        String s = shard.toString();
        String o = out.toString();
        List<String> command = switch (format) {
            case TAR -> List.of("tar", "-xf", s, "-C", o);
            case TAR_GZ -> List.of("tar", "-xzf", s, "-C", o);
            case TAR_LZ4 -> List.of("sh", "-c", "lz4 -dc \"$0\" | tar -xf - -C \"$1\"", s, o);
            case ZIP -> List.of("unzip", "-q", s, "-d", o);
            default -> throw new IllegalStateException();
        };
        String tool = format == ShardFormat.ZIP ? "unzip" : format == ShardFormat.TAR_LZ4 ? "lz4" : "tar";
        if (!onPath(tool)) {
            System.out.println("SKIPPED externalToolsReadOurShards(" + format + "): '" + tool + "' is not installed");
            Assumptions.abort(tool + " is not installed");
        }
        run(command);
        Map<String, byte[]> extracted = new TreeMap<>();
        try (Stream<Path> files = Files.walk(out)) {
            for (Path p : files.filter(Files::isRegularFile).sorted(Comparator.naturalOrder()).toList()) {
                extracted.put(out.relativize(p).toString(), Files.readAllBytes(p));
            }
        }
        Map<String, byte[]> expected = new TreeMap<>(sampleFiles());
        assertEquals(expected.keySet(), extracted.keySet());
        for (String n : expected.keySet()) {
            assertArrayEquals(expected.get(n), extracted.get(n), n);
        }
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (InputStream in = p.getInputStream()) {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError(command + " did not finish within 60 s");
            }
            String output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), command + " failed: " + output);
        } finally {
            p.destroyForcibly();
        }
    }
}
