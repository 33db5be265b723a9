package dev.croupier.nvme;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@Timeout(60)
class RowSamplerTest {

    @TempDir
    Path dir;

    /** Reader threads of {@link #sampler}'s samplers. */
    private static final int READERS = 4;

    private RowSampler.Builder sampler(Path file, int rowSize) {
        return RowSampler.builder(file).rowSize(rowSize).maxBatchRows(256).memoryLimit(8L << 20)
                .readerThreads(READERS);
    }

    @Test
    void everyRowWithReplacementIsAnExactRowOfTheFile() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 100, 50_000);
        try (RowSampler s = sampler(file, 100).build()) {
            assertEquals(!RowFiles.isTmpfs(dir), s.directIo(), "O_DIRECT on a disk, buffered on tmpfs");
            assertEquals(50_000, s.rowCount());
            long[] seen = new long[50_000];
            for (int b = 0; b < 400; b++) {
                RowBatch batch = s.readBatch(1 + b % 256);
                assertEquals(1 + b % 256, batch.rowCount());
                assertEquals((long) batch.rowCount() * 100, batch.segment().byteSize());
                for (int i = 0; i < batch.rowCount(); i++) {
                    seen[(int) RowFiles.checkedIndex(batch.row(i), 50_000)]++;
                }
            }
            long distinct = java.util.Arrays.stream(seen).filter(c -> c > 0).count();
            assertTrue(distinct > 10_000, "draws cover the file, saw " + distinct + " distinct rows");
        }
    }

    @Test
    void withoutReplacementEachEpochReturnsEveryRowExactlyOnce() throws IOException {
        int rows = 7_001;
        Path file = RowFiles.write(dir.resolve("rows.bin"), 24, rows);
        try (RowSampler s = sampler(file, 24).withReplacement(false).chunkBytes(1000).build()) {
            List<Long> stream = new ArrayList<>();
            int b = 0;
            while (stream.size() < 3 * rows) {
                RowBatch batch = s.readBatch(1 + (b++ * 37) % 256);
                for (int i = 0; i < batch.rowCount(); i++) {
                    stream.add(RowFiles.checkedIndex(batch.row(i), rows));
                }
            }
            for (int epoch = 0; epoch < 3; epoch++) {
                boolean[] seen = new boolean[rows];
                for (int i = epoch * rows; i < (epoch + 1) * rows; i++) {
                    int index = stream.get(i).intValue();
                    assertFalse(seen[index], "row " + index + " twice in epoch " + epoch);
                    seen[index] = true;
                }
            }
            assertNotEquals(stream.subList(0, rows), stream.subList(rows, 2 * rows), "each epoch has its own order");
        }
    }

    @Test
    void alignedRowsReadStraightIntoTheirSlotsAreExact() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 8192, 600);
        try (RowSampler s = sampler(file, 8192).chunkBytes(8192).memoryLimit(16L << 20).withReplacement(false).build()) {
            assertEquals(1, s.rowsPerChunk());
            boolean[] seen = new boolean[600];
            for (int n = 0; n < 600; n += 100) {
                RowBatch batch = s.readBatch(100);
                for (int i = 0; i < 100; i++) {
                    int index = (int) RowFiles.checkedIndex(batch.row(i), 600);
                    assertFalse(seen[index]);
                    seen[index] = true;
                }
            }
        }
    }

    @Test
    void neighboursInTheFileAreScatteredAcrossTheBatch() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 64, 20_000);
        try (RowSampler s = sampler(file, 64).chunkBytes(64 * 100).withReplacement(false).build()) {
            RowBatch batch = s.readBatch(200);
            int adjacent = 0;
            for (int i = 1; i < batch.rowCount(); i++) {
                if (Math.abs(RowFiles.decode(batch.row(i)) - RowFiles.decode(batch.row(i - 1))) == 1) {
                    adjacent++;
                }
            }
            assertTrue(adjacent < 10, adjacent + " of 199 neighbouring pairs in the batch were neighbours in the file");
        }
    }

    @Test
    void theSameSeedGivesTheSameStream() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 40, 10_000);
        long[] first = drain(sampler(file, 40).seed(42), 3000);
        long[] again = drain(sampler(file, 40).seed(42).readerThreads(7), 3000);
        long[] other = drain(sampler(file, 40).seed(43), 3000);
        assertArrayEquals(first, again, "reader threads do not change the order");
        assertFalse(java.util.Arrays.equals(first, other));
    }

    private static long[] drain(RowSampler.Builder builder, int rows) throws IOException {
        long[] out = new long[rows];
        try (RowSampler s = builder.build()) {
            for (int n = 0; n < rows; n += 100) {
                RowBatch batch = s.readBatch(100);
                for (int i = 0; i < 100; i++) {
                    out[n + i] = RowFiles.decode(batch.row(i));
                }
            }
        }
        return out;
    }

    @Test
    void memoryStaysUnderTheLimit() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 512, 40_000);
        long limit = 3L << 20;
        try (RowSampler s = sampler(file, 512).memoryLimit(limit).readerThreads(8).build()) {
            assertTrue(s.allocatedBytes() <= limit, s.allocatedBytes() + " > " + limit);
            assertTrue(s.workspaceRows() >= s.maxBatchRows());
            for (int i = 0; i < 100; i++) {
                s.readBatch(256);
            }
        }
    }

    @Test
    void pageCacheIsNotFilledByDirectReads() throws IOException {
        assumeTrue(PageCacheProbe.available() && !RowFiles.isTmpfs(dir), "needs Linux and a disk-backed temp dir");
        Path file = RowFiles.write(dir.resolve("rows.bin"), 4096, 2_000);
        PageCacheProbe.evict(file);
        assertEquals(0, PageCacheProbe.residentBytes(file), "evicted file starts cold");
        try (RowSampler s = sampler(file, 4096).memoryLimit(16L << 20).build()) {
            assertTrue(s.directIo());
            for (int i = 0; i < 40; i++) {
                s.readBatch(256);
            }
            assertTrue(s.stats().bytesRead() >= 40L * 256 * 4096);
        }
        assertEquals(0, PageCacheProbe.residentBytes(file), "O_DIRECT reads left pages in the cache");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ch.read(java.nio.ByteBuffer.allocate(8192), 0);
        }
        assertTrue(PageCacheProbe.residentBytes(file) >= 8192, "the probe sees buffered reads");
    }

    @Test
    void tmpfsFallsBackToBufferedReadsAndThreads() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm) && RowFiles.isTmpfs(shm), "needs a tmpfs /dev/shm");
        Path file = Files.createTempFile(shm, "croupier-nvme-", ".bin");
        try {
            RowFiles.write(file, 100, 5_000);
            List<String> logged = new ArrayList<>();
            java.util.logging.Logger log = java.util.logging.Logger.getLogger(RowSampler.class.getName());
            java.util.logging.Handler handler = new java.util.logging.Handler() {
                @Override
                public void publish(java.util.logging.LogRecord record) {
                    logged.add(record.getMessage());
                }

                @Override
                public void flush() {}

                @Override
                public void close() {}
            };
            log.addHandler(handler);
            try (RowSampler s = sampler(file, 100).withReplacement(false).build()) {
                assertFalse(s.directIo());
                s.readBatch(250);
                s.readBatch(250);
                assertEquals(1, logged.size(), "the fallback is announced once: " + logged);
                assertTrue(logged.getFirst().contains(file + ": tmpfs keeps files in the page cache; using buffered reads"),
                        logged.getFirst());
            } finally {
                log.removeHandler(handler);
            }
            var e = assertThrows(IllegalArgumentException.class, () -> sampler(file, 100).ioEngine(IoEngine.AIO).build());
            assertTrue(e.getMessage().startsWith("ioEngine = AIO needs O_DIRECT"), e.getMessage());
            try (RowSampler s = sampler(file, 100).withReplacement(false).build()) {
                assertFalse(s.directIo());
                assertEquals(IoEngine.THREADS, s.ioEngine(), "AUTO falls back to threads with buffered reads");
                boolean[] seen = new boolean[5_000];
                for (int n = 0; n < 5_000; n += 250) {
                    RowBatch batch = s.readBatch(250);
                    for (int i = 0; i < 250; i++) {
                        int index = (int) RowFiles.checkedIndex(batch.row(i), 5_000);
                        assertFalse(seen[index]);
                        seen[index] = true;
                    }
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void theBufferedFallbackDropsWhatItReadFromThePageCache() throws IOException {
        assumeTrue(PageCacheProbe.available() && !RowFiles.isTmpfs(dir), "needs Linux and a disk-backed temp dir");
        Path file = RowFiles.write(dir.resolve("rows.bin"), 100, 100_000);
        PageCacheProbe.evict(file);
        assertEquals(0, PageCacheProbe.residentBytes(file), "evicted file starts cold");
        try (RowSampler s = sampler(file, 100).bufferedReads().build()) {
            assertFalse(s.directIo());
            for (int i = 0; i < 200; i++) {
                RowBatch batch = s.readBatch(256);
                for (int r = 0; r < batch.rowCount(); r++) {
                    RowFiles.checkedIndex(batch.row(r), 100_000);
                }
            }
            assertTrue(s.stats().bytesRead() >= 200L * 256 * 100);
            // While it runs, only the reads in flight (one per reader, a chunk and its two partial
            // pages each) hold pages, counted twice since mincore walks the file as they move on;
            // with no drop after each read, every chunk read so far would stay (megabytes).
            long inFlight = (long) READERS * (RowSampler.DEFAULT_CHUNK_BYTES + 2 * 4096);
            long resident = PageCacheProbe.residentBytes(file);
            assertTrue(resident <= 2 * inFlight, "pages kept by reads already done: " + resident + " bytes");
        }
        assertEquals(0, PageCacheProbe.residentBytes(file), "buffered reads left pages in the cache");
    }

    @Test
    void floatAndByteBufferViewsShowTheSameRows() throws IOException {
        Path file = dir.resolve("floats.bin");
        int dims = 8;
        int rows = 1000;
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocate(rows * dims * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < rows; r++) {
            for (int d = 0; d < dims; d++) {
                data.putFloat(r + d / 10f);
            }
        }
        Files.write(file, data.array());
        try (RowSampler s = sampler(file, dims * 4).build()) {
            RowBatch batch = s.readBatch(64);
            float[] floats = batch.toFloatArray();
            java.nio.ByteBuffer bytes = batch.asByteBuffer();
            assertTrue(bytes.isReadOnly());
            assertEquals(64 * dims, floats.length);
            for (int i = 0; i < 64; i++) {
                float row = floats[i * dims];
                assertEquals(Math.floor(row), row, "row " + i + " starts on a row boundary");
                for (int d = 0; d < dims; d++) {
                    assertEquals(row + d / 10f, floats[i * dims + d]);
                    assertEquals(floats[i * dims + d], bytes.getFloat((i * dims + d) * 4));
                }
            }
        }
    }

    @Test
    void aBatchIsReadOnlyAndDiesWithTheSampler() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 16, 1000);
        RowBatch batch;
        try (RowSampler s = sampler(file, 16).build()) {
            batch = s.readBatch(10);
            assertTrue(batch.segment().isReadOnly());
        }
        assertThrows(IllegalStateException.class, () -> batch.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void anExplicitRowCountSamplesAPrefix() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 1000);
        Files.write(file, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
        try (RowSampler s = sampler(file, 10).rowCount(500).build()) {
            RowBatch batch = s.readBatch(256);
            for (int i = 0; i < batch.rowCount(); i++) {
                RowFiles.checkedIndex(batch.row(i), 500);
            }
        }
    }

    // ---- errors ----

    @Test
    void rowSizeZeroIsRejected() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 100);
        var e = assertThrows(IllegalArgumentException.class, () -> sampler(file, 0).build());
        assertEquals("rowSize = 0 bytes; must be in [1, 1073741824]", e.getMessage());
    }

    @Test
    void aFileSizeNotAMultipleOfTheRowSizeIsRejected() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 100);
        var e = assertThrows(IllegalArgumentException.class, () -> sampler(file, 12).build());
        assertTrue(e.getMessage().contains(file + ": file size 1000 bytes is not a multiple of rowSize = 12 bytes"),
                e.getMessage());
    }

    @Test
    void aBatchAboveTheMaximumIsRejected() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 1000);
        try (RowSampler s = sampler(file, 10).build()) {
            var e = assertThrows(IllegalArgumentException.class, () -> s.readBatch(257));
            assertTrue(e.getMessage().startsWith("batch of 257 rows is outside [1, maxBatchRows = 256]"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.readBatch(0));
        }
    }

    @Test
    void aMemoryLimitTooSmallForTwoWorkspacesIsRejected() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 1000, 1000);
        var e = assertThrows(IllegalArgumentException.class, () -> sampler(file, 1000).memoryLimit(100_000).build());
        assertTrue(e.getMessage().startsWith("memoryLimit = 100000 bytes is too small for two workspaces"), e.getMessage());
        assertTrue(e.getMessage().contains("needs at least"), e.getMessage());
    }

    @Test
    void everyOtherKnobIsChecked() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 100);
        assertMessage("readerThreads = 0; must be in [1, 1024]", sampler(file, 10).readerThreads(0));
        assertMessage("chunkBytes = -1; must be in [1, 67108864]", sampler(file, 10).chunkBytes(-1));
        assertMessage("memoryLimit = 0 bytes; must be positive", sampler(file, 10).memoryLimit(0));
        assertMessage("maxBatchRows = 0; must be in [1, 214748364] so a batch of 10-byte rows fits one ByteBuffer",
                sampler(file, 10).maxBatchRows(0));
        assertMessage("rowCount = 0; must be at least 1", sampler(file, 10).rowCount(0));
        assertMessage("rowCount = 101 rows of 10 bytes is more than " + file + " holds (1000 bytes = 100 rows)",
                sampler(file, 10).rowCount(101));
        Path empty = Files.createFile(dir.resolve("empty.bin"));
        assertMessage(empty + ": file is empty; no rows to sample", sampler(empty, 10));
        assertThrows(java.nio.file.NoSuchFileException.class, () -> sampler(dir.resolve("missing"), 10).build());
    }

    private static void assertMessage(String expected, RowSampler.Builder builder) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, builder::build).getMessage());
    }

    @ParameterizedTest
    @EnumSource(value = IoEngine.class, names = {"AIO", "THREADS"})
    void aTruncatedFileFailsWithTheFileAndOffset(IoEngine engine) throws IOException {
        if (engine == IoEngine.AIO) {
            RowFiles.assumeAio(dir);
        }
        Path file = RowFiles.write(dir.resolve("rows.bin"), 4096, 4096);
        try (RowSampler s = sampler(file, 4096).memoryLimit(4L << 20).maxBatchRows(64).ioEngine(engine).build()) {
            assertEquals(engine, s.ioEngine());
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            var e = assertThrows(UncheckedIOException.class, () -> {
                for (int i = 0; i < 10_000; i++) {
                    s.readBatch(64);
                }
            });
            assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("end of file at offset"),
                    e.getMessage());
            assertThrows(UncheckedIOException.class, () -> s.readBatch(1), "the failure sticks");
        }
    }

    @Test
    void readingAfterCloseIsAnError() throws IOException {
        Path file = RowFiles.write(dir.resolve("rows.bin"), 10, 100);
        RowSampler s = sampler(file, 10).build();
        s.close();
        s.close();
        assertThrows(IllegalStateException.class, () -> s.readBatch(1));
    }
}
