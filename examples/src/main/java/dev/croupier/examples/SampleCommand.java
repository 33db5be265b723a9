package dev.croupier.examples;

import dev.croupier.nvme.IoEngine;
import dev.croupier.nvme.PageCacheProbe;
import dev.croupier.nvme.RowBatch;
import dev.croupier.nvme.RowSampler;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code croupier sample FILE --row-size B --batch N [--threads T] [--seconds S]
 * [--chunk-bytes C] [--memory-limit M] [--row-count R] [--io-engine auto|aio|threads] [--no-replacement] [--json]}: samples random rows
 * from FILE for S seconds and prints samples/s, GiB/s of rows, GiB/s read from disk and the
 * page-cache bytes the run added to FILE (measured with mincore before and after).
 * Not thread-safe; one run per instance at a time.
 */
public final class SampleCommand implements CroupierCli.Command {

    /** Default run length in seconds. */
    static final double DEFAULT_SECONDS = 10;
    /** Shortest run accepted: one millisecond (at least one batch is always read). */
    static final double MIN_SECONDS = 0.001;
    /** Longest run accepted: one day. */
    static final double MAX_SECONDS = 86_400;

    private static final double GIB = 1024.0 * 1024 * 1024;

    private static final String USAGE = "usage: croupier sample FILE --row-size B --batch N [--threads T] [--seconds S]"
            + " [--chunk-bytes C] [--memory-limit M] [--row-count R] [--io-engine auto|aio|threads] [--no-replacement]"
            + " [--json]";

    @Override
    public int run(String[] args) throws Exception {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            System.out.println("  Samples random rows of B bytes from FILE in batches of N for S seconds (default "
                    + DEFAULT_SECONDS + ") and prints samples/s, GiB/s and the page-cache bytes the run added.");
            System.out.println("  Sizes take k, m, g suffixes. --no-replacement samples epochs that visit each row once.");
            System.out.println("  --row-count R samples only the first R rows (for a file that is not whole rows).");
            return 0;
        }
        Options o = Options.parse("sample", args, Set.of("no-replacement", "json"),
                Set.of("row-size", "batch", "threads", "seconds", "chunk-bytes", "memory-limit",
                        "row-count", "io-engine"));
        List<String> files = o.positional();
        if (files.size() != 1) {
            throw new UsageException("expected exactly one FILE, got " + files + "; " + USAGE);
        }
        Path file = Path.of(files.get(0));
        if (!Files.isRegularFile(file)) {
            throw new UsageException("FILE '" + file + "' is not a readable regular file");
        }
        if (o.string("row-size", null) == null) {
            throw new UsageException("--row-size is missing; " + USAGE);
        }
        if (o.string("batch", null) == null) {
            throw new UsageException("--batch is missing; " + USAGE);
        }
        int rowSize = (int) o.size("row-size", 0, 1, RowSampler.MAX_ROW_SIZE);
        int batch = o.integer("batch", 0, 1, Integer.MAX_VALUE);
        int threads = o.integer("threads", RowSampler.DEFAULT_READER_THREADS, 1, RowSampler.MAX_READER_THREADS);
        int chunkBytes = (int) o.size("chunk-bytes", RowSampler.DEFAULT_CHUNK_BYTES, 1, RowSampler.MAX_CHUNK_BYTES);
        long memoryLimit = o.size("memory-limit", RowSampler.DEFAULT_MEMORY_LIMIT, 1, Long.MAX_VALUE);
        double seconds = o.decimal("seconds", DEFAULT_SECONDS, MIN_SECONDS, MAX_SECONDS);
        long rowCount = o.longValue("row-count", 0, 1, Long.MAX_VALUE);
        boolean withReplacement = !o.flag("no-replacement");
        boolean json = o.flag("json");
        String engineName = o.string("io-engine", "auto");
        IoEngine engine = switch (engineName) {
            case "auto" -> IoEngine.AUTO;
            case "aio" -> IoEngine.AIO;
            case "threads" -> IoEngine.THREADS;
            default -> throw new UsageException("--io-engine '" + engineName + "': must be auto, aio or threads");
        };
        RowSampler.Builder builder = RowSampler.builder(file).rowSize(rowSize).maxBatchRows(batch)
                .readerThreads(threads).chunkBytes(chunkBytes).memoryLimit(memoryLimit).withReplacement(withReplacement)
                .ioEngine(engine);
        if (rowCount > 0) {
            builder.rowCount(rowCount);
        }
        boolean probe = PageCacheProbe.available();
        long cachedBefore = probe ? PageCacheProbe.residentBytes(file) : 0;
        long rows = 0;
        long checksum = 0;
        long started;
        long elapsed;
        RowSampler.Stats stats;
        boolean direct;
        IoEngine used;
        try (RowSampler sampler = build(builder)) {
            direct = sampler.directIo();
            used = sampler.ioEngine();
            long deadline = (long) (seconds * 1e9);
            started = System.nanoTime();
            do {
                RowBatch b = sampler.readBatch(batch);
                // Touch the batch so the run measures delivered rows, not just reads.
                checksum += b.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, b.segment().byteSize() - 1);
                rows += b.rowCount();
                elapsed = System.nanoTime() - started;
            } while (elapsed < deadline);
            stats = sampler.stats();
        }
        long cachedAfter = probe ? PageCacheProbe.residentBytes(file) : 0;
        double secs = elapsed / 1e9;
        double samplesPerS = rows / secs;
        double gibPerS = rows * (double) rowSize / GIB / secs;
        double diskGibPerS = stats.bytesRead() / GIB / secs;
        long added = cachedAfter - cachedBefore;
        long meanRead = stats.reads() == 0 ? 0 : stats.bytesRead() / stats.reads();
        if (json) {
            System.out.println(String.format(Locale.ROOT, "{\"samples_per_s\":%.1f,\"gib_per_s\":%.4f,"
                            + "\"page_cache_added_bytes\":%d,\"disk_gib_per_s\":%.4f,\"reads_per_s\":%.1f,"
                            + "\"mean_read_bytes\":%d,\"direct_io\":%b,\"row_size\":%d,\"batch\":%d,\"threads\":%d,"
                            + "\"io_engine\":\"%s\",\"seconds\":%.3f,\"checksum\":%d}",
                    samplesPerS, gibPerS, added, diskGibPerS, stats.reads() / secs, meanRead, direct, rowSize, batch,
                    threads, used.name().toLowerCase(Locale.ROOT), secs, checksum));
        } else {
            System.out.printf(Locale.ROOT, "%s: %d-byte rows, batches of %d, %d reads in flight (%s), %s, %.1f s%n",
                    file, rowSize, batch, threads, used == IoEngine.AIO ? "native AIO" : "reader threads",
                    direct ? "O_DIRECT" : "buffered (fallback)", secs);
            System.out.printf(Locale.ROOT, "samples/s          %,.0f%n", samplesPerS);
            System.out.printf(Locale.ROOT, "GiB/s (rows)       %.3f%n", gibPerS);
            System.out.printf(Locale.ROOT, "GiB/s (disk)       %.3f  (%,.0f reads/s of %d bytes on average)%n",
                    diskGibPerS, stats.reads() / secs, meanRead);
            System.out.printf(Locale.ROOT, "page cache added   %d pages (%d bytes)%s%n", added / 4096, added,
                    probe ? "" : " (not measured: needs Linux)");
        }
        return 0;
    }

    /** The sampler's settings by the names of this command's flags, for its refusals. */
    private static final Map<String, String> FLAG_OF_SETTING = Map.of("rowSize", "--row-size", "rowCount",
            "--row-count", "maxBatchRows", "--batch", "readerThreads", "--threads", "chunkBytes", "--chunk-bytes",
            "memoryLimit", "--memory-limit");

    /**
     * Builds the sampler; a setting it refuses (checks that need the file, such as a row count
     * beyond its end) is named by its flag.
     */
    private static RowSampler build(RowSampler.Builder builder) throws java.io.IOException {
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            for (Map.Entry<String, String> f : FLAG_OF_SETTING.entrySet()) {
                message = message.replace(f.getKey() + " = ", f.getValue() + " = ");
            }
            throw new UsageException(message);
        }
    }
}
