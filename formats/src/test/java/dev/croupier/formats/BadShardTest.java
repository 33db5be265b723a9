package dev.croupier.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipArchiveOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every kind of damage fails with a typed error naming the shard, the offset and the member. */
class BadShardTest {
    @TempDir
    Path dir;

    private static List<Record> twoRecords() {
        return List.of(
                new Record("a/0001", List.of(RecordFile.of(".jpg", bytes(700, 1)), RecordFile.of(".cls", bytes(3, 2)))),
                new Record("a/0002", List.of(RecordFile.of(".jpg", bytes(900, 3)))));
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static BadShardException readFails(Path shard) {
        return assertThrows(BadShardException.class, () -> ShardFiles.read(shard));
    }

    private static void assertNames(BadShardException e, Path shard, BadShardException.Cause cause) {
        assertEquals(cause, e.kind(), e.getMessage());
        assertEquals(shard, e.shard());
        assertTrue(e.getMessage().contains(shard.toString()), e.getMessage());
        assertTrue(e.offset() >= 0, e.getMessage());
        assertTrue(e.getMessage().contains("byte offset " + e.offset()), e.getMessage());
    }

    private Path truncate(Path shard, long length) throws IOException {
        byte[] all = Files.readAllBytes(shard);
        Path cut = dir.resolve("cut-" + shard.getFileName());
        Files.write(cut, Arrays.copyOf(all, (int) length));
        return cut;
    }

    @Test
    void tarTruncatedInsideContent() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.TAR, dir.resolve("t.tar"), twoRecords());
        Path cut = truncate(shard, 512 + 300);
        BadShardException e = readFails(cut);
        assertNames(e, cut, BadShardException.Cause.TRUNCATED);
        assertEquals("a/0001.jpg", e.member());
    }

    @Test
    void tarTruncatedInsideHeader() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.TAR, dir.resolve("t.tar"), twoRecords());
        Path cut = truncate(shard, 512 + 1024 + 200);
        BadShardException e = readFails(cut);
        assertNames(e, cut, BadShardException.Cause.TRUNCATED);
        assertEquals(1536, e.offset());
    }

    @Test
    void tarWithCorruptHeaderChecksum() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.TAR, dir.resolve("t.tar"), twoRecords());
        byte[] all = Files.readAllBytes(shard);
        all[1536 + 10] ^= 0x55; // inside the second member's name field: header checksum no longer matches
        Path bad = dir.resolve("bad.tar");
        Files.write(bad, all);
        BadShardException e = readFails(bad);
        assertNames(e, bad, BadShardException.Cause.BAD_HEADER);
        assertEquals(1536, e.offset());
    }

    @Test
    void tarGzWithCorruptCompressedStream() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.TAR_GZ, dir.resolve("t.tar.gz"), twoRecords());
        Path cut = truncate(shard, Files.size(shard) / 2);
        BadShardException e = readFails(cut);
        assertEquals(cut, e.shard());
        assertTrue(e.kind() == BadShardException.Cause.TRUNCATED || e.kind() == BadShardException.Cause.MALFORMED,
                e.getMessage());
    }

    @Test
    void zipCrcMismatch() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.ZIP, dir.resolve("z.zip"), twoRecords());
        byte[] all = Files.readAllBytes(shard);
        byte[] jpg = bytes(700, 1);
        int at = indexOf(all, jpg);
        all[at + 100] ^= 1;
        Path bad = dir.resolve("bad.zip");
        Files.write(bad, all);
        BadShardException e = readFails(bad);
        assertNames(e, bad, BadShardException.Cause.CHECKSUM_MISMATCH);
        assertEquals("a/0001.jpg", e.member());
        assertEquals(0, e.offset(), "offset of the entry's local header");
    }

    @Test
    void zipWithoutCentralDirectory() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.ZIP, dir.resolve("z.zip"), twoRecords());
        Path cut = truncate(shard, 800);
        BadShardException e = assertThrows(BadShardException.class, () -> ShardFormat.ZIP.open(cut).close());
        assertNames(e, cut, BadShardException.Cause.BAD_HEADER);
    }

    @Test
    void tfRecordDataCrcMismatch() throws IOException {
        Path shard = tfRecords(dir.resolve("r.tfrecord"));
        byte[] all = Files.readAllBytes(shard);
        int second = 12 + 700 + 4;
        all[second + 12 + 5] ^= 1;
        Path bad = dir.resolve("bad.tfrecord");
        Files.write(bad, all);
        BadShardException e = assertThrows(BadShardException.class, () -> readAll(bad));
        assertNames(e, bad, BadShardException.Cause.CHECKSUM_MISMATCH);
        assertEquals(second, e.offset());
        assertTrue(e.getMessage().contains("data CRC"), e.getMessage());
    }

    @Test
    void tfRecordLengthCrcMismatch() throws IOException {
        Path shard = tfRecords(dir.resolve("r.tfrecord"));
        byte[] all = Files.readAllBytes(shard);
        all[0] ^= 1;
        Path bad = dir.resolve("bad.tfrecord");
        Files.write(bad, all);
        BadShardException e = assertThrows(BadShardException.class, () -> readAll(bad));
        assertNames(e, bad, BadShardException.Cause.CHECKSUM_MISMATCH);
        assertTrue(e.getMessage().contains("length CRC"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {5, 12 + 700, 12 + 700 + 4 + 12 + 100})
    void tfRecordTruncated(int length) throws IOException {
        Path cut = truncate(tfRecords(dir.resolve("r.tfrecord")), length);
        BadShardException e = assertThrows(BadShardException.class, () -> readAll(cut));
        assertNames(e, cut, BadShardException.Cause.TRUNCATED);
    }

    private static Path tfRecords(Path target) throws IOException {
        return ShardFiles.write(ShardFormat.TFRECORD, target, List.of(
                new Record("r0", List.of(RecordFile.of(".tfrecord", bytes(700, 1)))),
                new Record("r1", List.of(RecordFile.of(".tfrecord", bytes(300, 2))))));
    }

    private static void readAll(Path shard) throws IOException {
        try (ShardReader r = ShardFormat.forPath(shard).open(shard)) {
            while (r.nextFile()) {
                r.readContent();
            }
        }
    }

    @Test
    void msgpackTruncated() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.MSGPACK, dir.resolve("m.msgpack"), twoRecords());
        Path cut = truncate(shard, Files.size(shard) - 50);
        BadShardException e = readFails(cut);
        assertNames(e, cut, BadShardException.Cause.TRUNCATED);
    }

    @Test
    void msgpackThatIsNotAStreamOfMaps() throws IOException {
        Path shard = ShardFiles.write(ShardFormat.MSGPACK, dir.resolve("m.msgpack"), twoRecords());
        byte[] all = Files.readAllBytes(shard);
        byte[] broken = Arrays.copyOf(all, all.length + 1);
        broken[all.length] = 0x2a; // positive fixint 42 where the next sample map should start
        Path bad = dir.resolve("bad.msgpack");
        Files.write(bad, broken);
        BadShardException e = readFails(bad);
        assertNames(e, bad, BadShardException.Cause.MALFORMED);
        assertEquals(all.length, e.offset());
    }

    @Test
    void msgpackWithNonBinaryValue() throws IOException {
        Path bad = dir.resolve("int.msgpack");
        // {"__key__": "k", "cls": 7}
        Files.write(bad, new byte[] {(byte) 0x82, (byte) 0xa7, '_', '_', 'k', 'e', 'y', '_', '_', (byte) 0xa1, 'k',
                (byte) 0xa3, 'c', 'l', 's', 0x07});
        BadShardException e = readFails(bad);
        assertNames(e, bad, BadShardException.Cause.MALFORMED);
        assertTrue(e.getMessage().contains("k.cls"), e.getMessage());
    }

    @Test
    void sortBenchmarkPartialRecord() throws IOException {
        Path bad = dir.resolve("x.gensort");
        Files.write(bad, new byte[250]);
        BadShardException e = assertThrows(BadShardException.class, () -> readAll(bad));
        assertNames(e, bad, BadShardException.Cause.TRUNCATED);
        assertEquals(200, e.offset());
    }

    @ParameterizedTest
    @ValueSource(strings = {"../evil.jpg", "/etc/evil.jpg", "a/../../evil.jpg", "C:/evil.jpg"})
    void tarMemberClimbingOutIsRefused(String member) throws IOException {
        Path shard = dir.resolve("slip.tar");
        try (OutputStream f = Files.newOutputStream(shard); TarArchiveOutputStream t = new TarArchiveOutputStream(f)) {
            t.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (String n : List.of("ok/0001.jpg", member)) {
                TarArchiveEntry e = new TarArchiveEntry(n, true);
                e.setSize(3);
                t.putArchiveEntry(e);
                t.write(new byte[] {1, 2, 3});
                t.closeArchiveEntry();
            }
        }
        BadShardException e = readFails(shard);
        assertNames(e, shard, BadShardException.Cause.UNSAFE_NAME);
        assertEquals(member, e.member());
        assertTrue(e.getMessage().contains(member), e.getMessage());
    }

    @Test
    void zipMemberClimbingOutIsRefused() throws IOException {
        Path shard = dir.resolve("slip.zip");
        try (ZipArchiveOutputStream z = new ZipArchiveOutputStream(shard)) {
            ZipArchiveEntry e = new ZipArchiveEntry("../../evil.sh");
            z.putArchiveEntry(e);
            z.write("x".getBytes(StandardCharsets.UTF_8));
            z.closeArchiveEntry();
        }
        BadShardException e = readFails(shard);
        assertNames(e, shard, BadShardException.Cause.UNSAFE_NAME);
        assertEquals("../../evil.sh", e.member());
    }

    private Path shardWithDuplicate() throws IOException {
        Path shard = dir.resolve("dup.tar");
        try (OutputStream f = Files.newOutputStream(shard); TarArchiveOutputStream t = new TarArchiveOutputStream(f)) {
            String[] names = {"s/1.jpg", "s/1.cls", "s/2.jpg", "s/1.jpg"};
            for (int i = 0; i < names.length; i++) {
                TarArchiveEntry e = new TarArchiveEntry(names[i]);
                e.setSize(1);
                t.putArchiveEntry(e);
                t.write(new byte[] {(byte) i});
                t.closeArchiveEntry();
            }
        }
        return shard;
    }

    @Test
    void duplicateFileAborts() throws IOException {
        Path shard = shardWithDuplicate();
        try (RecordReader r = new RecordReader(ShardFormat.TAR.open(shard), Reaction.ABORT, w -> { })) {
            r.next();
            r.next();
            BadShardException e = assertThrows(BadShardException.class, r::next);
            assertNames(e, shard, BadShardException.Cause.DUPLICATE_FILE);
            assertEquals("s/1.jpg", e.member());
            assertEquals(3 * 1024, e.offset());
        }
    }

    @Test
    void duplicateFileWarnsAndKeepsLaterCopy() throws IOException {
        Path shard = shardWithDuplicate();
        List<String> warnings = new ArrayList<>();
        List<Record> records = new ArrayList<>();
        try (RecordReader r = new RecordReader(ShardFormat.TAR.open(shard), Reaction.WARN, warnings::add)) {
            for (Record rec = r.next(); rec != null; rec = r.next()) {
                records.add(rec);
            }
        }
        assertEquals(1, warnings.size());
        assertTrue(warnings.getFirst().contains("s/1.jpg") && warnings.getFirst().contains(shard.toString()));
        assertEquals(List.of("s/1", "s/2", "s/1"), records.stream().map(Record::key).toList(),
                "the reader only groups adjacent files; merging non-adjacent ones is extraction's job");
        assertArrayEquals(new byte[] {3}, ShardFiles.bytes(records.get(2).files().getFirst()));
    }

    @Test
    void duplicateFileIgnoredSilently() throws IOException {
        List<String> warnings = new ArrayList<>();
        try (RecordReader r = new RecordReader(ShardFormat.TAR.open(shardWithDuplicate()), Reaction.IGNORE,
                warnings::add)) {
            int n = 0;
            while (r.next() != null) {
                n++;
            }
            assertEquals(3, n);
        }
        assertEquals(List.of(), warnings);
    }

    @Test
    void writerRefusesWhatItsFormatCannotHold() throws IOException {
        try (ShardWriter w = ShardFormat.TFRECORD.create(dir.resolve("x.tfrecord"))) {
            BadShardException e = assertThrows(BadShardException.class, () -> w.beginRecord("k", 2));
            assertEquals(BadShardException.Cause.UNREPRESENTABLE, e.kind());
        }
        try (ShardWriter w = ShardFormat.SORT_BENCHMARK.create(dir.resolve("x.gensort"))) {
            assertThrows(BadShardException.class, () -> w.beginRecord("not-hex", 1));
        }
        try (ShardWriter w = ShardFormat.TAR.create(dir.resolve("x.tar"))) {
            assertEquals(BadShardException.Cause.UNSAFE_NAME,
                    assertThrows(BadShardException.class, () -> w.beginRecord("../up", 1)).kind());
            assertEquals(BadShardException.Cause.UNREPRESENTABLE,
                    assertThrows(BadShardException.class, () -> w.beginRecord("a/b.c", 1)).kind());
            assertThrows(IllegalArgumentException.class, () -> {
                w.beginRecord("k", 1);
                w.writeFile("jpg", java.nio.ByteBuffer.allocate(1));
            });
        }
        assertEquals(List.of(), ShardFiles.listNames(dir), "closing an unfinished writer deletes its temp file");
    }

    @Test
    void finishedShardIsInvisibleUntilCommitted() throws IOException {
        Path target = dir.resolve("late.tar");
        PendingShard pending;
        try (ShardWriter w = ShardFormat.TAR.create(target)) {
            for (Record r : twoRecords()) {
                r.writeTo(w);
            }
            pending = w.finish();
        }
        assertTrue(Files.exists(pending.temporary()));
        assertTrue(Files.notExists(target));
        assertEquals(Files.size(pending.temporary()), pending.size());
        pending.commit();
        assertEquals(List.of("late.tar"), ShardFiles.listNames(dir));
        assertEquals(ShardFiles.describe(twoRecords()), ShardFiles.describe(ShardFiles.read(target)));

        Path other = dir.resolve("discarded.zip");
        try (ShardWriter w = ShardFormat.ZIP.create(other)) {
            twoRecords().getFirst().writeTo(w);
            w.finish().discard();
        }
        assertEquals(List.of("late.tar"), ShardFiles.listNames(dir));
    }

    @Test
    void formatResolvesByLongestExtension() {
        assertEquals(ShardFormat.TAR_GZ, ShardFormat.forPath(Path.of("x/a.tar.gz")));
        assertEquals(ShardFormat.TAR_GZ, ShardFormat.forPath(Path.of("a.TGZ")));
        assertEquals(ShardFormat.TAR, ShardFormat.forPath(Path.of("a.b.tar")));
        assertEquals(ShardFormat.TAR_LZ4, ShardFormat.forExtension("tar.lz4").orElseThrow());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ShardFormat.forPath(Path.of("a.rar")));
        assertTrue(e.getMessage().contains("a.rar") && e.getMessage().contains(".tar.gz"), e.getMessage());
    }

    @Test
    void memberNamesSplitAtFirstDotOfFileName() {
        assertEquals("a/b.c/x", MemberNames.key("a/b.c/x.seg.png"));
        assertEquals(".seg.png", MemberNames.extension("a/b.c/x.seg.png"));
        assertEquals("README", MemberNames.key("README"));
        assertEquals("", MemberNames.extension("README"));
        assertTrue(MemberNames.isLocal("a/..b/c..d"));
        assertTrue(!MemberNames.isLocal("a/..") && !MemberNames.isLocal("..\\x") && !MemberNames.isLocal(""));
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("needle not found");
    }
}
