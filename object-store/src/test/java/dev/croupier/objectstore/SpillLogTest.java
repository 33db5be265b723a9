package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spill log's two homes hold the same records: the Chronicle queue (this JVM runs with the
 * flags Chronicle needs) and the plain index file used where Chronicle cannot work.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpillLogTest {

    private static final List<SpillLog.Entry> RECORDS = List.of(
            new SpillLog.Entry(SpillLog.SPILLED, 1, new ObjectId(7, 8), 4096, 100_000, 100_000, Compression.NONE),
            new SpillLog.Entry(SpillLog.SPILLED, 1, new ObjectId(-1, Long.MIN_VALUE), 110_592, 5, 3, Compression.LZ4),
            new SpillLog.Entry(SpillLog.DEAD, 1, new ObjectId(7, 8), 4096, 100_000, 100_000, Compression.NONE),
            new SpillLog.Entry(SpillLog.FILE_DELETED, 1, null, 0, 0, 0, Compression.NONE));

    @TempDir
    Path dir;

    @Test
    void queueAndIndexFileReadBackTheSameRecords() {
        Path queued = dir.resolve("queued");
        Path indexed = dir.resolve("indexed");
        for (Path spillDir : List.of(queued, indexed)) {
            try (SpillLog log = new SpillLog(mkdirs(spillDir), spillDir == queued)) {
                RECORDS.forEach(log::append);
                assertEquals(RECORDS, SpillLog.readAll(spillDir), "a reader tails the log while it is written");
            }
            assertEquals(RECORDS, SpillLog.readAll(spillDir));
        }
        assertTrue(Files.isDirectory(queued.resolve(SpillLog.DIRECTORY)));
        assertFalse(Files.exists(queued.resolve(SpillLog.INDEX_FILE)));
        assertFalse(Files.exists(indexed.resolve(SpillLog.DIRECTORY)));
        assertEquals(RECORDS.size() * (long) SpillLog.RECORD_BYTES, size(indexed.resolve(SpillLog.INDEX_FILE)));
    }

    @Test
    void aRecordCutShortAtTheEndOfTheIndexFileIsNotReadYet() throws Exception {
        try (SpillLog log = new SpillLog(dir, false)) {
            RECORDS.forEach(log::append);
        }
        Files.write(dir.resolve(SpillLog.INDEX_FILE), new byte[] {SpillLog.VERSION, SpillLog.SPILLED, 0},
                StandardOpenOption.APPEND);
        assertEquals(RECORDS, SpillLog.readAll(dir));
    }

    @Test
    void aRecordOfAnUnknownVersionIsReportedWithItsPlace() throws Exception {
        try (SpillLog log = new SpillLog(dir, false)) {
            RECORDS.forEach(log::append);
        }
        Path index = dir.resolve(SpillLog.INDEX_FILE);
        byte[] bytes = Files.readAllBytes(index);
        bytes[2 * SpillLog.RECORD_BYTES] = 9;
        Files.write(index, bytes);
        ObjectStoreException e = assertThrows(ObjectStoreException.class, () -> SpillLog.readAll(dir));
        assertTrue(e.getMessage().contains(index + " record 2 has unsupported version 9"), e.getMessage());
    }

    @Test
    void aStoreWithoutSpillsHasAnEmptyLog() {
        assertEquals(List.of(), SpillLog.readAll(dir));
    }

    @Test
    void recordsKeepTheDrawnLayout() {
        ByteBuffer out = ByteBuffer.allocate(SpillLog.RECORD_BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        RECORDS.get(1).writeTo(out);
        assertFalse(out.hasRemaining());
        assertEquals(SpillLog.VERSION, out.get(0));
        assertEquals(SpillLog.SPILLED, out.get(1));
        assertEquals(SpillFrame.codecOf(Compression.LZ4), out.get(2));
        assertEquals(1, out.getInt(4));
        assertEquals(-1, out.getLong(8));
        assertEquals(Long.MIN_VALUE, out.getLong(16));
        assertEquals(110_592, out.getLong(24));
        assertEquals(5, out.getLong(32));
        assertEquals(3, out.getLong(40));
        assertEquals(0, out.getLong(48));
    }

    private static Path mkdirs(Path p) {
        try {
            return Files.createDirectories(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
