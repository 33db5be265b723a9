package dev.croupier.examples.sort;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.croupier.examples.CroupierCli;
import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.futures.Cluster;
import dev.croupier.nvme.PageCacheProbe;
import dev.croupier.shuffle.records.SortBenchmarkRecords;
import dev.croupier.objectstore.TemporaryClaim;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/** The sort benchmark's subcommands: {@code gensort}, {@code valsort}, {@code sort}, {@code sort-benchmark}. */
public final class SortCommands {

    private static final int RECORD = 100;

    private SortCommands() {}

    /** {@code gensort N FILE [--seed S]}. */
    public static final class GenSort implements CroupierCli.Command {
        @Override
        public int run(String[] args) throws IOException {
            if (List.of(args).contains("--help")) {
                System.out.println("usage: croupier gensort N FILE [--seed S]\n  Writes N Sort Benchmark records"
                        + " (100 bytes, 10-byte keys), the same for the same seed.");
                return 0;
            }
            Options o = Options.parse("gensort", args, Set.of(), Set.of("seed"));
            List<String> pos = o.positional();
            if (pos.size() != 2) {
                throw new UsageException("needs N and FILE, got " + pos);
            }
            long n;
            try {
                n = Long.parseLong(pos.get(0));
            } catch (NumberFormatException e) {
                throw new UsageException("N = '" + pos.get(0) + "' is not a whole number of records");
            }
            if (n < 0 || n > Long.MAX_VALUE / RECORD) {
                throw new UsageException("N = " + n + " is out of range");
            }
            long seed = o.longValue("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
            Path out = outputFile(pos.get(1));
            try {
                SortBenchmarkRecords.writeFile(out, n, seed, Runtime.getRuntime().availableProcessors());
            } catch (IOException e) {
                throw cannotWrite(out, e);
            }
            return 0;
        }
    }

    /** {@code valsort FILE [--json]}: exits 1 when the file is out of order. */
    public static final class ValSort implements CroupierCli.Command {
        @Override
        public int run(String[] args) throws IOException {
            if (List.of(args).contains("--help")) {
                System.out.println("usage: croupier valsort FILE [--json]\n  Checks order; counts records and duplicate"
                        + " keys; prints the checksum (128-bit sum of every record's CRC-32). Exits 1 if out of order.");
                return 0;
            }
            Options o = Options.parse("valsort", args, Set.of("json"), Set.of());
            if (o.positional().size() != 1) {
                throw new UsageException("needs FILE, got " + o.positional());
            }
            Path file = Path.of(o.positional().getFirst());
            if (!Files.isRegularFile(file)) {
                throw new UsageException(file + " is not a readable file");
            }
            SortBenchmarkRecords.Validation v = SortBenchmarkRecords.validate(file);
            Map<String, Object> report = new LinkedHashMap<>();
            report.put("records", v.records());
            report.put("duplicate_keys", v.duplicateKeys());
            report.put("ordered", v.ordered());
            if (!v.ordered()) {
                report.put("first_unordered_record", v.firstDisorder());
            }
            report.put("checksum", v.checksum().hex());
            if (o.flag("json")) {
                printJson(report);
            } else {
                System.out.printf(Locale.ROOT, "Records: %d%nDuplicate keys: %d%nChecksum: %s%n%s%n", v.records(),
                        v.duplicateKeys(), v.checksum().hex(), v.ordered() ? "SUCCESS - all records are in order"
                                : "FAILURE - record " + v.firstDisorder() + " is out of order");
            }
            return v.ordered() ? 0 : 1;
        }
    }

    /** {@code sort IN OUT [--output-parts DIR] [common options]}. */
    public static final class Sort implements CroupierCli.Command {
        @Override
        public int run(String[] args) throws IOException {
            if (List.of(args).contains("--help")) {
                System.out.println("usage: croupier sort IN OUT [options]   or   croupier sort IN --output-parts DIR [options]\n"
                        + "  Sorts a file of 100-byte records on a cluster; OUT appears only when complete.\n"
                        + SortSettings.USAGE);
                return 0;
            }
            Options o = Options.parse("sort", args, SortSettings.FLAGS, union(SortSettings.VALUED, Set.of("output-parts")));
            SortSettings settings = SortSettings.parse(o);
            List<String> pos = o.positional();
            String parts = o.string("output-parts", null);
            if (pos.size() != (parts == null ? 2 : 1)) {
                throw new UsageException(parts == null ? "needs IN and OUT, got " + pos : "needs IN (and --output-parts DIR), got " + pos);
            }
            Path in = Path.of(pos.getFirst());
            if (!Files.isRegularFile(in)) {
                throw new UsageException(in + " is not a readable file");
            }
            Path out = parts == null ? outputFile(pos.get(1)) : null;
            SortRun.Outcome outcome = new SortRun(settings).sort(settings.cluster().start(), in, out,
                    parts == null ? null : Path.of(parts));
            report(settings, outcome, null, null);
            return 0;
        }
    }

    /** {@code sort-benchmark [--size SIZE] [--seed S] [common options]}: generate, sort, validate, report. */
    public static final class SortBenchmark implements CroupierCli.Command {
        /** Default data size: sorts in about a minute on 2 cores, in memory with the default stores. */
        static final long DEFAULT_SIZE = 1L << 30;

        @Override
        public int run(String[] args) throws IOException {
            if (List.of(args).contains("--help")) {
                System.out.println("usage: croupier sort-benchmark [--size SIZE] [--seed S] [options]\n"
                        + "  Generates SIZE of records (default 1g), sorts them, validates the output against the\n"
                        + "  input's checksum, and reports time per phase against the disk bound measured on the spot\n"
                        + "  (and against the same bound with the input read at the rate the check read it back).\n"
                        + "  --size SIZE           data size, k/m/g suffixes (default 1g)\n"
                        + "  --seed S              generator seed (default 0)\n"
                        + "  --in-memory           generate, sort and check inside the object stores; no files\n"
                        + SortSettings.USAGE);
                return 0;
            }
            Options o = Options.parse("sort-benchmark", args, union(SortSettings.FLAGS, Set.of("in-memory")),
                    union(SortSettings.VALUED, Set.of("size", "seed")));
            SortSettings settings = SortSettings.parse(o);
            if (!o.positional().isEmpty()) {
                throw new UsageException("takes no positional arguments, got " + o.positional());
            }
            long size = o.size("size", DEFAULT_SIZE, RECORD, 1L << 44);
            long seed = o.longValue("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
            long records = size / RECORD;
            if (o.flag("in-memory")) {
                SortRun.Checked checked = new SortRun(settings).sortInMemory(records, seed);
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("valid", checked.valid());
                extra.put("checksum", checked.output().hex());
                extra.put("input_checksum", checked.input().hex());
                extra.put("generate_seconds", checked.generateSeconds());
                extra.put("validate_seconds", checked.validateSeconds());
                report(settings, checked.outcome(), null, extra);
                return checked.valid() ? 0 : 1;
            }
            Files.createDirectories(settings.cluster().spillDir());
            // Claimed: a run killed with kill -9 leaves gigabytes here, which the next run deletes.
            // The cluster first: one that cannot start is named before the input is written.
            try (Cluster cluster = settings.cluster().start();
                 TemporaryClaim claim = TemporaryClaim.folder(settings.cluster().spillDir(),
                         "croupier-sort-benchmark-")) {
                Path work = claim.path();
                Path in = work.resolve("input");
                Path out = work.resolve("output");
                long t0 = System.nanoTime();
                SortBenchmarkRecords.writeFile(in, records, seed, Runtime.getRuntime().availableProcessors());
                double generate = (System.nanoTime() - t0) / 1e9;
                System.err.printf(Locale.ROOT, "generate       %6.2f s  %d records%n", generate, records);
                if (PageCacheProbe.available()) {
                    PageCacheProbe.evict(in); // the sort reads its input from the disk, not from memory
                }
                DiskBound bound = DiskBound.measure(work, Math.min(records * RECORD, 1L << 30));
                System.err.printf(Locale.ROOT, "disk bound     write %.0f MB/s, read %.0f MB/s%n",
                        bound.writeBytesPerSecond() / 1e6, bound.readBytesPerSecond() / 1e6);
                SortRun.Outcome outcome = new SortRun(settings).sort(cluster, in, out, null);
                long t1 = System.nanoTime();
                SortBenchmarkRecords.Validation input = SortBenchmarkRecords.validate(in);
                double inputRead = records * RECORD / ((System.nanoTime() - t1) / 1e9);
                SortBenchmarkRecords.Validation output = SortBenchmarkRecords.validate(out);
                double validate = (System.nanoTime() - t1) / 1e9;
                boolean valid = output.ordered() && output.records() == records
                        && output.checksum().equals(input.checksum());
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("valid", valid);
                extra.put("checksum", output.checksum().hex());
                extra.put("input_checksum", input.checksum().hex());
                extra.put("generate_seconds", generate);
                extra.put("validate_seconds", validate);
                report(settings, outcome, new DiskFigures(bound, inputRead), extra);
                return valid ? 0 : 1;
            }
        }
    }

    /**
     * What a sort on disk measured of its disk: the probe's {@code bound}, and how fast the check
     * after the sort read the whole input back, all its ranges at once. The probe reads a file it
     * has just written, which a virtual machine's host may still hold in its cache, and the sort's
     * input may not be, so the bound reads the input at the rate it did read
     * ({@link DiskBound#sortSeconds(long, long, double)}).
     */
    private record DiskFigures(DiskBound bound, double inputReadBytesPerSecond) {}

    /**
     * Prints the report. With {@code disk}, the time is set against the disk's bound, and
     * against the probe's alone, whose read the host's cache may have served.
     */
    private static void report(SortSettings settings, SortRun.Outcome outcome, DiskFigures disk,
                               Map<String, Object> extra) throws IOException {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("records", outcome.bytes() / RECORD);
        r.put("bytes", outcome.bytes());
        r.put("seconds", outcome.seconds());
        r.put("phases", outcome.phases());
        r.put("spilled_bytes", outcome.spilledBytes());
        r.put("restored_bytes", outcome.restoredBytes());
        r.put("strategy", outcome.strategy());
        r.put("nodes", outcome.nodes());
        r.put("store_bytes_per_node", outcome.storeBytesPerNode());
        if (settings.cluster().storeSizing() != null) {
            r.put("store_sizing", settings.cluster().storeSizing());
        }
        r.put("partitions", outcome.partitions());
        r.put("throughput_mb_per_s", outcome.bytes() / 1e6 / outcome.seconds());
        if (disk != null) {
            DiskBound bound = disk.bound();
            long spill = Math.max(0, outcome.bytes() - outcome.nodes() * outcome.storeBytesPerNode());
            // The disk gave the input at least as fast as each whole read of it that happened:
            // the map phase's and the check's, each with its own work included. The check reads
            // it after the sort, so a slow sort cannot make the bound slower than the check's.
            Double mapSeconds = outcome.phases().get("map");
            double mapRead = mapSeconds == null ? 0 : outcome.bytes() / mapSeconds;
            double inputRead = Math.max(mapRead, disk.inputReadBytesPerSecond());
            double boundSeconds = bound.sortSeconds(outcome.bytes(), spill, inputRead);
            double probeSeconds = bound.sortSeconds(outcome.bytes(), spill);
            r.put("disk_write_mb_per_s", bound.writeBytesPerSecond() / 1e6);
            r.put("disk_read_mb_per_s", bound.readBytesPerSecond() / 1e6);
            r.put("map_read_mb_per_s", mapRead / 1e6);
            r.put("input_check_read_mb_per_s", disk.inputReadBytesPerSecond() / 1e6);
            r.put("bound_seconds", boundSeconds);
            r.put("bound", "read and write the data once" + (spill > 0 ? ", and write and read back the " + spill
                    + " bytes the stores cannot hold" : "") + ", at the disk's bandwidth; the input read at the faster of"
                    + " the map phase's and the check's rates");
            r.put("ratio_to_bound", outcome.seconds() / boundSeconds);
            r.put("probe_bound_seconds", probeSeconds);
            r.put("ratio_to_probe_bound", outcome.seconds() / probeSeconds);
        }
        r.putAll(outcome.failures());
        if (extra != null) {
            r.putAll(extra);
        }
        if (settings.json()) {
            printJson(r);
            return;
        }
        int width = r.keySet().stream().mapToInt(String::length).max().orElse(0);
        for (Map.Entry<String, Object> e : r.entrySet()) {
            Object v = e.getValue();
            String text = v instanceof Double d ? String.format(Locale.ROOT, "%.3f", d) : String.valueOf(v);
            if (v instanceof Map<?, ?> m) {
                StringBuilder sb = new StringBuilder();
                m.forEach((k, x) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(' ')
                        .append(String.format(Locale.ROOT, "%.2f s", (Double) x)));
                text = sb.toString();
            }
            System.out.printf(Locale.ROOT, "%-" + width + "s %s%n", e.getKey(), text);
        }
    }

    private static void printJson(Map<String, Object> report) throws IOException {
        System.out.println(new ObjectMapper().disable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
    }

    /**
     * The file a command writes, checked before any work: not a folder, in a folder that may be
     * written (made if missing; the file appears there under a temporary name, then is renamed).
     */
    static Path outputFile(String name) throws IOException {
        Path out = Path.of(name);
        if (Files.isDirectory(out)) {
            throw new UsageException(out + " is a folder; give the name of the file to write");
        }
        Path folder = out.toAbsolutePath().getParent();
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            throw cannotWrite(out, e);
        }
        if (!Files.isWritable(folder)) {
            throw new UsageException("cannot write " + out + ": its folder " + folder + " is not writable");
        }
        return out;
    }

    /**
     * A failure to write {@code out}, naming it, then what failed: the file system's failures
     * name the file they failed on (a folder in the way, or the temporary file written first).
     */
    static IOException cannotWrite(Path out, IOException e) {
        String prefix = "cannot write " + out + ": ";
        if (e.getMessage() != null && e.getMessage().startsWith(prefix)) {
            return e; // the library named the file already (SortBenchmarkRecords.writeFile)
        }
        return new IOException(prefix + (e instanceof java.nio.file.FileSystemException f
                ? CroupierCli.describe(f) : e.getMessage()), e);
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        return Stream.concat(a.stream(), b.stream()).collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
