package dev.croupier.examples.sort;

import dev.croupier.examples.ClusterOptions;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.PartitionOutput;
import dev.croupier.shuffle.PhaseStats;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.records.Checksum;
import dev.croupier.shuffle.records.RecordKernels;
import dev.croupier.shuffle.records.RecordLayout;
import dev.croupier.shuffle.records.SortBenchmarkRecords;
import dev.croupier.shuffle.records.SortJob;
import dev.croupier.objectstore.TemporaryClaim;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One sort of a record file on a cluster ({@link SortSettings#cluster}), with its output committed atomically: one
 * file (the partitions in order, written under a temporary name and renamed when complete) or
 * one file per partition in a folder (all renamed only once every part is written). A failure
 * leaves no output and no temporary file. Reports phase times as it goes: a progress bar on a
 * terminal, one line per phase otherwise (on stderr, so stdout stays for the report).
 */
final class SortRun {

    /**
     * What a run measured, and the cluster it ran on: its nodes, each one's store capacity, and
     * what failures cost ({@link ClusterOptions#failureReport}).
     */
    record Outcome(long bytes, double seconds, Map<String, Double> phases, String strategy, int partitions,
                   long spilledBytes, long restoredBytes, int nodes, long storeBytesPerNode,
                   Map<String, Object> failures) {}

    private final SortSettings settings;
    private final PrintStream progress = System.err;
    private final boolean terminal = System.console() != null;

    SortRun(SortSettings settings) {
        this.settings = settings;
    }

    /** The prefix of a sort run's claim on its temporary output, hidden in the output's folder. */
    static final String CLAIM_PREFIX = ".croupier-sort-";

    /**
     * Sorts {@code in} into {@code out}, or into one file per partition in {@code partsDir}, on
     * {@code cluster}, which the caller started (so a cluster that cannot start is named before
     * any other work) and this run closes. Reducers write under temporary names (a file next to
     * {@code out}, or a hidden folder in {@code partsDir}) that the run claims
     * ({@link TemporaryClaim}), after removing what killed runs left there. The cluster is
     * closed, so every task has stopped, before the output is committed or, after a failure,
     * removed: no reducer can write after the cleanup.
     */
    Outcome sort(Cluster cluster, Path in, Path out, Path partsDir) throws IOException {
        try (cluster) { // closed before the commit below; closing again is nothing
            return sortOn(cluster, in, out, partsDir);
        }
    }

    private Outcome sortOn(Cluster cluster, Path in, Path out, Path partsDir) throws IOException {
        Path dir = partsDir != null ? partsDir : out.toAbsolutePath().getParent();
        TemporaryClaim claim;
        Path temp;
        try {
            Files.createDirectories(dir);
            claim = TemporaryClaim.take(dir, CLAIM_PREFIX);
        } catch (IOException e) {
            throw SortCommands.cannotWrite(partsDir != null ? partsDir : out, e);
        }
        try (claim) {
            try {
                temp = partsDir != null ? Files.createDirectory(claim.path())
                        : Files.createFile(dir.resolve(claim.name() + ".tmp"));
            } catch (IOException e) {
                throw SortCommands.cannotWrite(partsDir != null ? partsDir : out, e);
            }
            return sort(cluster, in, out, partsDir, temp);
        }
    }

    private Outcome sort(Cluster cluster, Path in, Path out, Path partsDir, Path temp) throws IOException {
        boolean committed = false;
        try {
            Outcome outcome;
            Map<String, Double> phases = new LinkedHashMap<>();
            try (cluster) {
                long start = System.nanoTime();
                SortJob.Builder builder = SortJob.builder().inputFile(in).strategy(settings.strategy());
                if (settings.mappers() > 0) {
                    builder.mappers(settings.mappers());
                }
                if (settings.partitions() > 0) {
                    builder.partitions(settings.partitions());
                }
                SortJob job = builder.build();
                phase("sample+map", start);
                long bytes;
                try (ShuffleResult<Long> result = partsDir != null ? job.runIntoParts(cluster, temp, PART)
                        : job.runInto(cluster, temp)) {
                    try {
                        bytes = await(result, start, phases);
                    } catch (CroupierException e) {
                        throw asGiven(e, temp, partsDir != null ? partsDir : out);
                    }
                    if (partsDir == null) {
                        // every range is in: make the file durable inside the timed run, as a
                        // part's reducer does for its part
                        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                            ch.force(false);
                        }
                    }
                    long end = System.nanoTime();
                    ClusterStats stats = cluster.stats();
                    long spilled = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
                    long restored = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesRestored).sum();
                    outcome = new Outcome(bytes, (end - start) / 1e9, phases,
                            result.strategy().name().toLowerCase(Locale.ROOT), result.outputs().size(), spilled, restored,
                            cluster.aliveNodes().size(), cluster.objectStoreBytes(),
                            ClusterOptions.failureReport(cluster));
                }
            }
            if (partsDir == null) {
                Files.move(temp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } else {
                for (int r = 0; r < outcome.partitions(); r++) {
                    String name = String.format(Locale.ROOT, PART, r);
                    Files.move(temp.resolve(name), partsDir.resolve(name), StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                }
                Files.delete(temp);
            }
            committed = true;
            return outcome;
        } finally {
            if (!committed) {
                SortCommands.deleteTree(temp);
            }
        }
    }

    /**
     * A reducer that fails names the file it was writing: the temporary file, or a part in the
     * temporary folder, which the user never saw. The message names what the user gave instead.
     */
    private static CroupierException asGiven(CroupierException e, Path temp, Path given) {
        String message = e.getMessage();
        return message == null || !message.contains(temp.toString()) ? e
                : new CroupierException(e.code(), message.replace(temp.toString(), given.toString()), e);
    }

    /** Names of the parts of {@code --output-parts}. */
    private static final String PART = "part-%05d";

    /** What an in-memory run found when it checked its output. */
    record Checked(Outcome outcome, boolean valid, Checksum input, Checksum output, double generateSeconds,
                   double validateSeconds) {}

    /**
     * Generates {@code records} records into the cluster's stores (one task per map input), sorts
     * them there and checks the sorted partitions there: order inside every partition and across
     * neighbours, record count and checksum. No file is read or written, so the time is the
     * shuffle's own.
     */
    Checked sortInMemory(long records, long seed) {
        long bytes = records * RECORD;
        int mappers = settings.mappers() > 0 ? settings.mappers()
                : (int) Math.max(1, (bytes + SortJob.DEFAULT_BYTES_PER_MAPPER - 1) / SortJob.DEFAULT_BYTES_PER_MAPPER);
        Map<String, Double> phases = new LinkedHashMap<>();
        try (Cluster cluster = settings.cluster().start()) {
            long t0 = System.nanoTime();
            List<ObjectRef<MemorySegment>> inputs = new ArrayList<>(mappers);
            List<ObjectRef<byte[]>> inputSums = new ArrayList<>(mappers);
            for (int m = 0; m < mappers; m++) {
                long first = records * m / mappers;
                long count = records * (m + 1) / mappers - first;
                ObjectRef<MemorySegment> input = cluster.task(() -> {
                    MemorySegment block = TaskOutput.allocate(count * RECORD);
                    SortBenchmarkRecords.generate(seed, first, block);
                    return block;
                }).name("generate").remote();
                inputs.add(input);
                inputSums.add(cluster.task(SortRun::summarize, input).name("checksum-input").remote());
            }
            Checksum input = Checksum.ZERO;
            for (ObjectRef<byte[]> sum : inputSums) {
                input = input.plus(Summary.of(sum.get()).checksum());
                sum.release();
            }
            double generate = (System.nanoTime() - t0) / 1e9;
            line(String.format(Locale.ROOT, "%-14s %6.2f s  %d records in %d blocks", "generate", generate, records, mappers));

            long start = System.nanoTime();
            SortJob.Builder job = SortJob.builder().inputs(inputs).strategy(settings.strategy());
            if (settings.partitions() > 0) {
                job.partitions(settings.partitions());
            }
            phase("sample+submit", start);
            try (ShuffleResult<MemorySegment> result = job.build().run(cluster)) {
                inputs.forEach(ObjectRef::release); // the map tasks hold them as long as they need them
                phases.put("sample+submit", (System.nanoTime() - start) / 1e9);
                List<ObjectRef<MemorySegment>> refs = result.refs();
                for (int r = 0; r < refs.size(); r++) {
                    refs.get(r).whenDone().join();
                    bar("reduce", r + 1, refs.size());
                }
                long end = System.nanoTime();
                for (PhaseStats p : result.stats()) {
                    phases.put(p.name(), p.seconds());
                    line(String.format(Locale.ROOT, "%-14s %6.2f s  %5d tasks  %s", p.name(), p.seconds(), p.tasks(),
                            mib(p.bytesOut())));
                }
                ClusterStats stats = cluster.stats();
                long spilled = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
                long restored = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesRestored).sum();
                Outcome outcome = new Outcome(records * RECORD, (end - start) / 1e9, phases,
                        result.strategy().name().toLowerCase(Locale.ROOT), refs.size(), spilled, restored,
                        cluster.aliveNodes().size(), cluster.objectStoreBytes(), ClusterOptions.failureReport(cluster));

                long v0 = System.nanoTime();
                List<ObjectRef<byte[]>> outputSums = new ArrayList<>(refs.size());
                for (ObjectRef<MemorySegment> part : refs) {
                    outputSums.add(cluster.task(SortRun::summarize, part).name("validate").remote());
                }
                result.release();
                Checksum output = Checksum.ZERO;
                long seen = 0;
                boolean ordered = true;
                byte[] lastKey = null;
                for (ObjectRef<byte[]> ref : outputSums) {
                    Summary summary = Summary.of(ref.get());
                    ref.release();
                    output = output.plus(summary.checksum());
                    seen += summary.records();
                    ordered &= summary.sorted();
                    if (summary.records() > 0) {
                        ordered &= lastKey == null || Arrays.compareUnsigned(lastKey, summary.firstKey()) <= 0;
                        lastKey = summary.lastKey();
                    }
                }
                double validate = (System.nanoTime() - v0) / 1e9;
                return new Checked(outcome, ordered && seen == records && output.equals(input), input, output, generate,
                        validate);
            }
        }
    }

    private static final int RECORD = 100;

    /** A checked block: checksum, record count, sortedness and its first and last keys. */
    private record Summary(Checksum checksum, long records, boolean sorted, byte[] firstKey, byte[] lastKey) {
        private static final int KEY = SortBenchmarkRecords.LAYOUT.keyBytes();
        private static final int BYTES = 8 + 8 + 8 + 1 + 2 * KEY;

        static Summary of(byte[] bytes) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            Checksum checksum = new Checksum(b.getLong(), b.getLong());
            long records = b.getLong();
            boolean sorted = b.get() == 1;
            byte[] first = new byte[KEY];
            byte[] last = new byte[KEY];
            b.get(first).get(last);
            return new Summary(checksum, records, sorted, first, last);
        }
    }

    /** Runs as a task on the node holding {@code block}; only the summary's few bytes travel. */
    private static byte[] summarize(MemorySegment block) {
        RecordLayout layout = SortBenchmarkRecords.LAYOUT;
        Checksum checksum = SortBenchmarkRecords.checksum(block);
        long n = layout.records(block.byteSize());
        ByteBuffer b = ByteBuffer.allocate(Summary.BYTES);
        b.putLong(checksum.high()).putLong(checksum.low()).putLong(n).put((byte) (RecordKernels.isSorted(layout, block) ? 1 : 0));
        if (n > 0) {
            b.put(RecordKernels.key(layout, block, 0)).put(RecordKernels.key(layout, block, n - 1));
        }
        return b.array();
    }

    /**
     * Waits for every reducer (a bar on a terminal), records the phases; returns the bytes
     * written. A sort into a file returns from its run once every map is done (the reducers'
     * positions need the maps' sizes), so the driver's spans are sample+map and reduce+write.
     */
    private long await(ShuffleResult<Long> result, long start, Map<String, Double> phases) {
        long submitted = System.nanoTime();
        phases.put("sample+map", (submitted - start) / 1e9);
        long bytes = 0;
        int done = 0;
        int total = result.outputs().size();
        for (PartitionOutput<Long> part : result.inCompletionOrder()) {
            bytes += part.ref().get();
            bar("reduce+write", ++done, total);
        }
        for (PhaseStats p : result.stats()) {
            phases.put(p.name(), p.seconds());
            line(String.format(Locale.ROOT, "%-14s %6.2f s  %5d tasks  %s", p.name(), p.seconds(), p.tasks(),
                    p.name().equals("reduce") ? "written in place" : mib(p.bytesOut())));
        }
        phases.put("reduce+write", (System.nanoTime() - submitted) / 1e9);
        return bytes;
    }

    void phase(String name, long startNanos) {
        if (!terminal) {
            return;
        }
        progress.print("\r" + name + "...");
        progress.flush();
    }

    void line(String text) {
        progress.println((terminal ? "\r" : "") + text);
    }

    private void bar(String name, int done, int total) {
        if (terminal) {
            int width = 40;
            int filled = (int) ((long) done * width / total);
            progress.print("\r" + name + " [" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + done + "/" + total);
            if (done == total) {
                progress.println();
            }
            progress.flush();
        }
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }
}
