package dev.croupier.benchmarks.nvme;

import dev.croupier.nvme.IoEngine;
import dev.croupier.nvme.PageCacheProbe;
import dev.croupier.nvme.RowBatch;
import dev.croupier.nvme.RowSampler;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Benchmark program for nvme-io's random row sampling: one run of either the {@code RowSampler}
 * or the memory-mapped baseline (each of T threads copies uniformly random rows out of
 * {@link MappedByteBuffer}s into its own batch buffer), started with the file evicted from the
 * page cache, printing one JSON line with samples/s, GiB/s of rows, GiB/s read from disk and the
 * page-cache bytes the run added. benchmarks/scripts/nvme-vs-fio.sh runs it next to fio on the
 * same file; JMH is not used because the figure of interest is sustained disk throughput over
 * seconds, not a per-call latency.
 *
 * <pre>
 * java [croupier JVM flags] -cp ... dev.croupier.benchmarks.nvme.SamplerVsMmap \
 *     sampler|mmap FILE ROW_SIZE BATCH THREADS SECONDS [CHUNK_BYTES [IO_ENGINE [with|without]]]
 * </pre>
 * The last argument is the sampler's mode: chunks drawn with replacement (the default) or
 * without (each epoch visits every chunk once).
 */
public final class SamplerVsMmap {

    private static final double GIB = 1024.0 * 1024 * 1024;
    /** MappedByteBuffer holds at most 2 GiB; the file is mapped in windows of 1 GiB. */
    private static final long WINDOW = 1L << 30;

    private SamplerVsMmap() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: SamplerVsMmap sampler|mmap FILE ROW_SIZE BATCH THREADS SECONDS"
                    + " [CHUNK_BYTES [IO_ENGINE [with|without]]]");
            System.exit(2);
        }
        String mode = args[0];
        Path file = Path.of(args[1]);
        int rowSize = Integer.parseInt(args[2]);
        int batch = Integer.parseInt(args[3]);
        int threads = Integer.parseInt(args[4]);
        double seconds = Double.parseDouble(args[5]);
        int chunkBytes = args.length > 6 ? Integer.parseInt(args[6]) : RowSampler.DEFAULT_CHUNK_BYTES;
        IoEngine engine = args.length > 7 ? IoEngine.valueOf(args[7].toUpperCase(Locale.ROOT)) : IoEngine.AUTO;
        boolean withReplacement = switch (args.length > 8 ? args[8] : "with") {
            case "with" -> true;
            case "without" -> false;
            default -> throw new IllegalArgumentException("sampling '" + args[8] + "': must be with or without");
        };
        PageCacheProbe.evict(file);
        long before = PageCacheProbe.residentBytes(file);
        Result r = switch (mode) {
            case "sampler" -> sampler(file, rowSize, batch, threads, seconds, chunkBytes, engine, withReplacement);
            case "mmap" -> mmap(file, rowSize, batch, threads, seconds);
            default -> throw new IllegalArgumentException("mode '" + mode + "': must be sampler or mmap");
        };
        long added = PageCacheProbe.residentBytes(file) - before;
        if ("mmap".equals(mode)) {
            PageCacheProbe.evict(file); // leave the machine's cache as we found it
        }
        System.out.printf(Locale.ROOT, "{\"mode\":\"%s\",\"row_size\":%d,\"batch\":%d,\"threads\":%d,"
                        + "\"samples_per_s\":%.1f,\"gib_per_s\":%.4f,\"disk_gib_per_s\":%.4f,\"reads_per_s\":%.1f,"
                        + "\"mean_read_bytes\":%d,\"page_cache_added_bytes\":%d,\"seconds\":%.2f,\"checksum\":%d,\"io_engine\":\"%s\"}%n",
                mode, rowSize, batch, threads, r.rows / r.seconds, r.rows * (double) rowSize / GIB / r.seconds,
                r.bytesRead / GIB / r.seconds, r.reads / r.seconds, r.reads == 0 ? 0 : r.bytesRead / r.reads, added,
                r.seconds, r.checksum, r.engine);
    }

    /** @param engine the sampler's I/O engine, or "page cache" for the mmap baseline */
    private record Result(long rows, double seconds, long bytesRead, long reads, long checksum, String engine) {}

    private static Result sampler(Path file, int rowSize, int batch, int threads, double seconds, int chunkBytes,
                                  IoEngine engine, boolean withReplacement) throws IOException {
        try (RowSampler s = RowSampler.builder(file).rowSize(rowSize).maxBatchRows(batch).readerThreads(threads)
                .chunkBytes(chunkBytes).ioEngine(engine).withReplacement(withReplacement).build()) {
            long rows = 0;
            long checksum = 0;
            long deadline = (long) (seconds * 1e9);
            long start = System.nanoTime();
            long elapsed;
            do {
                RowBatch b = s.readBatch(batch);
                checksum += b.segment().get(ValueLayout.JAVA_BYTE, b.segment().byteSize() - 1);
                rows += b.rowCount();
                elapsed = System.nanoTime() - start;
            } while (elapsed < deadline);
            RowSampler.Stats st = s.stats();
            return new Result(rows, elapsed / 1e9, st.bytesRead(), st.reads(), checksum,
                    s.ioEngine().name().toLowerCase(Locale.ROOT));
        }
    }

    private static Result mmap(Path file, int rowSize, int batch, int threads, double seconds) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            long rowCount = size / rowSize;
            // Windows overlap by one row so every row lies inside one window.
            int windows = (int) ((size + WINDOW - 1) / WINDOW);
            MappedByteBuffer[] maps = new MappedByteBuffer[windows];
            for (int w = 0; w < windows; w++) {
                long off = w * WINDOW;
                maps[w] = ch.map(FileChannel.MapMode.READ_ONLY, off, Math.min(WINDOW + rowSize, size - off));
            }
            LongAdder rows = new LongAdder();
            LongAdder sums = new LongAdder();
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            Thread[] workers = new Thread[threads];
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                long seed = t;
                workers[t] = Thread.ofPlatform().start(() -> {
                    SplittableRandom rnd = new SplittableRandom(seed);
                    MemorySegment out = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(batch * rowSize));
                    long sum = 0;
                    long n = 0;
                    while (System.nanoTime() < deadline) {
                        for (int i = 0; i < batch; i++) {
                            long offset = rnd.nextLong(rowCount) * rowSize;
                            MappedByteBuffer map = maps[(int) (offset / WINDOW)];
                            MemorySegment.copy(MemorySegment.ofBuffer(map), offset % WINDOW, out, (long) i * rowSize, rowSize);
                        }
                        sum += out.get(ValueLayout.JAVA_BYTE, out.byteSize() - 1);
                        n += batch;
                    }
                    rows.add(n);
                    sums.add(sum);
                });
            }
            for (Thread w : workers) {
                w.join();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            return new Result(rows.sum(), elapsed, 0, 0, sums.sum(), "page cache");
        }
    }
}
