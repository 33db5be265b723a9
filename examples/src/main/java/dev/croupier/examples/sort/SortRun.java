package dev.croupier.examples.sort;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.PhaseStats;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.records.SortJob;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One sort of a record file on an embedded cluster, with its output committed atomically: one
 * file (the partitions in order, written under a temporary name and renamed when complete) or
 * one file per partition in a folder (all renamed only once every part is written). A failure
 * leaves no output and no temporary file. Reports phase times as it goes: a progress bar on a
 * terminal, one line per phase otherwise (on stderr, so stdout stays for the report).
 */
final class SortRun {

    /** What a run measured. */
    record Outcome(long bytes, double seconds, Map<String, Double> phases, String strategy, int partitions,
                   long spilledBytes, long restoredBytes) {}

    private final SortSettings settings;
    private final PrintStream progress = System.err;
    private final boolean terminal = System.console() != null;

    SortRun(SortSettings settings) {
        this.settings = settings;
    }

    Outcome sort(Path in, Path out, Path partsDir) throws IOException {
        Map<String, Double> phases = new LinkedHashMap<>();
        try (Cluster cluster = settings.startCluster()) {
            long start = System.nanoTime();
            SortJob.Builder job = SortJob.builder().inputFile(in).strategy(settings.strategy());
            if (settings.mappers() > 0) {
                job.mappers(settings.mappers());
            }
            if (settings.partitions() > 0) {
                job.partitions(settings.partitions());
            }
            phase("sample+submit", start);
            try (ShuffleResult<MemorySegment> result = job.build().run(cluster)) {
                long submitted = System.nanoTime();
                phases.put("sample+submit", (submitted - start) / 1e9);
                long bytes = partsDir == null ? writeOne(result, out) : writeParts(result, partsDir);
                long end = System.nanoTime();
                for (PhaseStats p : result.stats()) {
                    phases.put(p.name(), p.seconds());
                    line(String.format(Locale.ROOT, "%-14s %6.2f s  %5d tasks  %s", p.name(), p.seconds(), p.tasks(),
                            mib(p.bytesOut())));
                }
                phases.put("write_output", (end - submitted) / 1e9);
                ClusterStats stats = cluster.stats();
                long spilled = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
                long restored = stats.nodes().stream().mapToLong(ClusterStats.NodeStats::bytesRestored).sum();
                return new Outcome(bytes, (end - start) / 1e9, phases, result.strategy().name().toLowerCase(Locale.ROOT),
                        result.outputs().size(), spilled, restored);
            }
        }
    }

    /** Streams the partitions in order into one file, releasing each as soon as it is written. */
    private long writeOne(ShuffleResult<MemorySegment> result, Path out) throws IOException {
        Path dir = out.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = Files.createTempFile(dir, "." + out.getFileName(), ".tmp");
        boolean done = false;
        try {
            long bytes = 0;
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                List<ObjectRef<MemorySegment>> refs = result.refs();
                for (int r = 0; r < refs.size(); r++) {
                    bytes += write(ch, refs.get(r).get());
                    refs.get(r).release();
                    bar("reduce+write", r + 1, refs.size());
                }
                ch.force(false);
            }
            Files.move(temp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            done = true;
            return bytes;
        } finally {
            if (!done) {
                Files.deleteIfExists(temp);
            }
        }
    }

    /** Writes part-00000, part-00001... into {@code dir}, each under a temporary name until all are written. */
    private long writeParts(ShuffleResult<MemorySegment> result, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> temps = new ArrayList<>();
        boolean done = false;
        try {
            long bytes = 0;
            List<ObjectRef<MemorySegment>> refs = result.refs();
            for (int r = 0; r < refs.size(); r++) {
                Path temp = dir.resolve(String.format(Locale.ROOT, ".part-%05d.tmp", r));
                temps.add(temp);
                try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    bytes += write(ch, refs.get(r).get());
                    ch.force(false);
                }
                refs.get(r).release();
                bar("reduce+write", r + 1, refs.size());
            }
            for (int r = 0; r < temps.size(); r++) {
                Files.move(temps.get(r), dir.resolve(String.format(Locale.ROOT, "part-%05d", r)),
                        StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
            return bytes;
        } finally {
            if (!done) {
                for (Path t : temps) {
                    Files.deleteIfExists(t);
                }
            }
        }
    }

    private static long write(FileChannel ch, MemorySegment part) throws IOException {
        ByteBuffer bb = part.asByteBuffer();
        long n = bb.remaining();
        while (bb.hasRemaining()) {
            ch.write(bb);
        }
        return n;
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
