package dev.croupier.benchmarks.objectstore;

import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.PinnedObject;
import dev.croupier.objectstore.StoreMetrics;
import dev.croupier.objectstore.WritableObject;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * The Exoshuffle paper's Figure 15 experiment: write far more objects than the store holds so
 * they spill, then restore them all (with prefetching ahead of the reader), for several object
 * sizes; compared with {@code dd} sequential write (with fdatasync) and read of the same number
 * of bytes on the same disk, in the same run, the faster of through the page cache and with
 * {@code O_DIRECT}. The page cache is dropped before every read
 * phase (needs root; otherwise reads may be served from cache and the program says so).
 *
 * <pre>
 * flock /tmp/croupier-bench.lock java $(cat examples/target/classes/croupier-jvm.flags) -Xmx2g \
 *     -cp benchmarks/target/benchmarks.jar dev.croupier.benchmarks.objectstore.SpillRestoreBenchmark \
 *     &lt;spill dir&gt; [total GiB = 16] [store MiB = 1024] [object sizes = 102400,1048576]
 * </pre>
 *
 * Spill throughput counts the time to create every object (copying it in, waiting for room)
 * plus the final fdatasync of the spill files; restore throughput counts the time to get (and
 * delete) every object that was spilled.
 */
public final class SpillRestoreBenchmark {

    private static final long SOURCE_BYTES = 256L << 20;
    private static final long PREFETCH_WINDOW_BYTES = 64L << 20;

    private SpillRestoreBenchmark() {
    }

    /**
     * Runs the experiment.
     *
     * @param args spill directory, total GiB, store MiB, comma-separated object sizes
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: SpillRestoreBenchmark <spill dir> [total GiB] [store MiB] [sizes]");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        long total = (long) (Double.parseDouble(args.length > 1 ? args[1] : "16") * (1L << 30));
        long capacity = Long.parseLong(args.length > 2 ? args[2] : "1024") << 20;
        String[] sizes = (args.length > 3 ? args[3] : "102400,1048576").split(",");
        System.out.printf(Locale.ROOT, "spill dir %s, %.1f GiB per run through a %d MiB store; free disk %.1f GiB%n",
                dir, total / 1073741824.0, capacity >> 20, Files.getFileStore(dir).getUsableSpace() / 1073741824.0);

        double[] dd = ddBaseline(dir, total);
        System.out.printf(Locale.ROOT, "dd, the faster way: write %.1f MiB/s; read %.1f MiB/s%n", dd[0], dd[1]);

        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(SOURCE_BYTES, 4096);
            byte[] noise = new byte[1 << 20];
            ThreadLocalRandom.current().nextBytes(noise);
            for (long o = 0; o < SOURCE_BYTES; o += noise.length) {
                MemorySegment.copy(MemorySegment.ofArray(noise), 0, source, o, noise.length);
            }
            List<double[]> results = new ArrayList<>();
            for (String s : sizes) {
                long size = Long.parseLong(s.trim());
                double[] r = run(dir, source, total, capacity, size);
                results.add(r);
                System.out.printf(Locale.ROOT,
                        "objects %7d B: spill %.1f MiB/s (%.0f%% of dd write; writer alone %.1f MiB/s), "
                                + "restore %.1f MiB/s (%.0f%% of dd read), total %.1f s (spill %.1f s + restore %.1f s), "
                                + "%d spill files%n",
                        size, r[0], 100 * r[0] / dd[0], r[5], r[1], 100 * r[1] / dd[1], r[2] + r[3], r[2], r[3],
                        (long) r[4]);
            }
            if (results.size() > 1) {
                double first = results.get(0)[2] + results.get(0)[3];
                double last = results.get(results.size() - 1)[2] + results.get(results.size() - 1)[3];
                System.out.printf(Locale.ROOT, "total time %s vs %s objects: %.2fx%n", sizes[0], sizes[sizes.length - 1],
                        first / last);
            }
        }
    }

    /** Returns {spill MiB/s, restore MiB/s, spill s, restore s, spill files, writer-only MiB/s}. */
    private static double[] run(Path dir, MemorySegment source, long total, long capacity, long size)
            throws Exception {
        int count = (int) (total / size);
        List<ObjectId> ids = new ArrayList<>(count);
        try (ObjectStore store = ObjectStore.builder().name("fig15-" + size).capacityBytes(capacity)
                .spillDirectory(dir).build()) {
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                ObjectId id = ObjectId.of(size, i);
                try (WritableObject w = store.create(id, size)) {
                    long from = (i * 4096L) % (SOURCE_BYTES - size);
                    MemorySegment.copy(source, from, w.segment(), 0, size);
                    w.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                    w.seal();
                }
                ids.add(id);
            }
            forceSpillFiles(dir.resolve("croupier-store-" + store.name()));
            double spillSeconds = (System.nanoTime() - start) / 1e9;
            StoreMetrics afterSpill = store.metrics();

            dropCaches();
            // objects still in memory are read first (no I/O, and reading them later would
            // force them out to disk to make room for restores)
            List<ObjectId> spilled = new ArrayList<>();
            for (ObjectId id : ids) {
                if (store.describe(id).file().getFileName().toString().startsWith("spill-")) {
                    spilled.add(id);
                } else {
                    check(store, id);
                    store.delete(id);
                }
            }
            int window = (int) Math.max(1, PREFETCH_WINDOW_BYTES / size);
            long restoreStart = System.nanoTime();
            long restoredBefore = store.metrics().bytesRestored();
            for (int i = 0; i < spilled.size(); i++) {
                if (i % window == 0) {
                    store.prefetch(spilled.subList(Math.min(spilled.size(), i + window),
                            Math.min(spilled.size(), i + 2 * window)));
                    if (i == 0) {
                        store.prefetch(spilled.subList(0, Math.min(spilled.size(), window)));
                    }
                }
                check(store, spilled.get(i));
                store.delete(spilled.get(i));
            }
            double restoreSeconds = (System.nanoTime() - restoreStart) / 1e9;
            long restored = store.metrics().bytesRestored() - restoredBefore;
            return new double[] {
                afterSpill.bytesSpilled() / 1048576.0 / spillSeconds,
                restored / 1048576.0 / restoreSeconds,
                spillSeconds, restoreSeconds, afterSpill.spillFiles() + 0.0,
                afterSpill.spillBytesPerSecond() / 1048576.0};
        }
    }

    private static void check(ObjectStore store, ObjectId id) throws InterruptedException {
        try (PinnedObject pinned = store.get(id)) {
            long index = pinned.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            if (index != id.low()) {
                throw new IllegalStateException("object " + id + " holds index " + index);
            }
        }
    }

    private static void forceSpillFiles(Path storeDir) throws IOException {
        try (Stream<Path> files = Files.list(storeDir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.getFileName().toString().startsWith("spill-0"))::iterator) {
                try (FileChannel channel = FileChannel.open(f, StandardOpenOption.WRITE)) {
                    channel.force(false);
                }
            }
        }
    }

    /** Returns {write MiB/s, read MiB/s} of dd on a file of {@code total} bytes in {@code dir}. */
    /**
     * {write, read} MiB/s of dd on {@code total} bytes in {@code dir}, the faster of through the
     * page cache (bs=1M, fdatasync; read after dropping caches) and with O_DIRECT (bs=8M): the
     * store writes and restores large objects with O_DIRECT, so the disk's limit is the better
     * of the two.
     */
    private static double[] ddBaseline(Path dir, long total) throws Exception {
        double[] buffered = dd(dir, total, false);
        double[] direct = dd(dir, total, true);
        System.out.printf(Locale.ROOT, "dd through the page cache: write %.1f MiB/s, read %.1f MiB/s; "
                + "with O_DIRECT: write %.1f MiB/s, read %.1f MiB/s%n", buffered[0], buffered[1], direct[0], direct[1]);
        return new double[] {Math.max(buffered[0], direct[0]), Math.max(buffered[1], direct[1])};
    }

    private static double[] dd(Path dir, long total, boolean direct) throws Exception {
        Path file = dir.resolve("dd-baseline.bin");
        long mib = total >> 20;
        try {
            long start = System.nanoTime();
            if (direct) {
                exec("dd", "if=/dev/zero", "of=" + file, "bs=8M", "count=" + mib / 8, "oflag=direct", "conv=fdatasync",
                        "status=none");
            } else {
                exec("dd", "if=/dev/zero", "of=" + file, "bs=1M", "count=" + mib, "conv=fdatasync", "status=none");
            }
            double write = (direct ? mib / 8 * 8 : mib) / ((System.nanoTime() - start) / 1e9);
            dropCaches();
            start = System.nanoTime();
            if (direct) {
                exec("dd", "if=" + file, "of=/dev/null", "bs=8M", "iflag=direct", "status=none");
            } else {
                exec("dd", "if=" + file, "of=/dev/null", "bs=1M", "status=none");
            }
            double read = (direct ? mib / 8 * 8 : mib) / ((System.nanoTime() - start) / 1e9);
            return new double[] {write, read};
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void dropCaches() throws Exception {
        exec("sync");
        Path knob = Path.of("/proc/sys/vm/drop_caches");
        try {
            Files.writeString(knob, "1");
        } catch (IOException e) {
            System.out.println("cannot drop the page cache (" + e.getMessage() + "): reads may come from memory");
        }
    }

    private static void exec(String... command) throws Exception {
        Process p = new ProcessBuilder(command).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + p.exitValue());
        }
    }
}
