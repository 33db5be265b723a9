package dev.croupier.nvme;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The two read engines give the same rows: native AIO (one thread, reads completing in any
 * order, each scattered while the next is already queued) and blocking reader threads.
 */
class IoEngineTest {

    @TempDir
    Path dir;

    private void assumeAio() throws IOException {
        RowFiles.assumeAio(dir);
    }

    private RowSampler.Builder sampler(Path file, int rowSize, IoEngine engine) {
        return RowSampler.builder(file).rowSize(rowSize).maxBatchRows(256).memoryLimit(8L << 20).readerThreads(6)
                .ioEngine(engine);
    }

    private static long[] stream(RowSampler s, int rows, long count) {
        long[] out = new long[(int) count];
        int at = 0;
        for (int b = 0; at < count; b++) {
            RowBatch batch = s.readBatch(1 + (b * 53) % 256);
            for (int i = 0; i < batch.rowCount() && at < count; i++) {
                out[at++] = RowFiles.checkedIndex(batch.row(i), rows);
            }
        }
        return out;
    }

    @Test
    void bothEnginesReturnTheSameRowsInTheSameOrder() throws IOException {
        assumeAio();
        int rows = 20_011;
        Path file = RowFiles.write(dir.resolve("rows.bin"), 100, rows);
        long[] aio;
        long[] threads;
        try (RowSampler s = sampler(file, 100, IoEngine.AIO).withReplacement(false).chunkBytes(4096).build()) {
            assertEquals(IoEngine.AIO, s.ioEngine());
            aio = stream(s, rows, 2L * rows);
        }
        try (RowSampler s = sampler(file, 100, IoEngine.THREADS).withReplacement(false).chunkBytes(4096).build()) {
            assertEquals(IoEngine.THREADS, s.ioEngine());
            threads = stream(s, rows, 2L * rows);
        }
        assertArrayEquals(aio, threads, "the engines gave different streams");
        for (int epoch = 0; epoch < 2; epoch++) {
            boolean[] seen = new boolean[rows];
            for (int i = epoch * rows; i < (epoch + 1) * rows; i++) {
                assertFalse(seen[(int) aio[i]], "row " + aio[i] + " twice in epoch " + epoch);
                seen[(int) aio[i]] = true;
            }
        }
    }

    @Test
    void autoTakesAioWithDirectIoAndThreadsWhenAskedFor() throws IOException {
        assumeAio();
        Path file = RowFiles.write(dir.resolve("rows.bin"), 512, 10_000);
        for (int chunk : new int[] {512, 65536}) {
            try (RowSampler s = sampler(file, 512, IoEngine.AUTO).chunkBytes(chunk).build()) {
                assertEquals(IoEngine.AIO, s.ioEngine());
                RowFiles.checkedIndex(s.readBatch(100).row(99), 10_000);
            }
        }
        try (RowSampler s = sampler(file, 512, IoEngine.THREADS).build()) {
            assertEquals(IoEngine.THREADS, s.ioEngine());
        }
    }

    @ParameterizedTest
    @EnumSource(value = IoEngine.class, names = {"AIO", "THREADS"})
    void alignedRowsReadInPlaceAndChunkedRowsAreExact(IoEngine engine) throws IOException {
        if (engine == IoEngine.AIO) {
            assumeAio();
        }
        Path file = RowFiles.write(dir.resolve("rows.bin"), 4096, 2_000);
        for (int chunk : new int[] {4096, 65536}) {
            try (RowSampler s = sampler(file, 4096, engine).chunkBytes(chunk).memoryLimit(16L << 20).build()) {
                for (int b = 0; b < 50; b++) {
                    RowBatch batch = s.readBatch(200);
                    for (int i = 0; i < batch.rowCount(); i++) {
                        RowFiles.checkedIndex(batch.row(i), 2_000);
                    }
                }
                assertTrue(s.stats().reads() > 0);
            }
        }
    }
}
