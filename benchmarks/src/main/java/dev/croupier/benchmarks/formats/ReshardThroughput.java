package dev.croupier.benchmarks.formats;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardWriter;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.futures.Cluster;
import dev.croupier.shuffle.reshard.ReshardJob;

/**
 * Benchmark program for issue 6: resharding throughput of small-file tar shards (records of
 * about 100 KiB in 3 files) against the sequential read-plus-write bound measured in the same
 * run (every input byte read once and written once to one file, fsynced, as the job must at
 * least do; the best of three before each rep). Both run on a warm page cache, so the bound is
 * memory and file-system bound, not the disk's; the job also pays for tar parsing, the shuffle
 * and one file per output shard.
 *
 * <p>Usage: {@code java -Xmx4g <flags> -cp benchmarks/target/benchmarks.jar
 * dev.croupier.benchmarks.formats.ReshardThroughput [totalMiB=1024] [inputShardMiB=16]
 * [outputShardMiB=64] [reps=3] [workDir=java.io.tmpdir] [nodes=0] [stats]}. With {@code nodes} 0 the job
 * is {@link LocalReshard}; with N &gt; 0 it is the distributed {@link ReshardJob} on an embedded
 * cluster of N nodes with 1 GiB of store memory each, started once before the clock starts and
 * used by every rep, as an application keeps its cluster. Prints one line per measurement, then the
 * medians of all reps and of the warm ones (all but rep 0, which also pays the JIT and the first
 * touch of the stores' pages). With {@code stats}, the cluster's task and node table follows.
 */
public final class ReshardThroughput {
    private ReshardThroughput() {
    }

    public static void main(String[] args) throws IOException {
        long totalMiB = args.length > 0 ? Long.parseLong(args[0]) : 1024;
        long inMiB = args.length > 1 ? Long.parseLong(args[1]) : 16;
        long outMiB = args.length > 2 ? Long.parseLong(args[2]) : 64;
        int reps = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Path parent = Path.of(args.length > 4 ? args[4] : System.getProperty("java.io.tmpdir"));
        int nodes = args.length > 5 ? Integer.parseInt(args[5]) : 0;
        boolean stats = args.length > 6 && args[6].equals("stats");
        Path dir = Files.createTempDirectory(parent, "croupier-reshard-bench-");
        Path memory = null;
        try {
            List<String> inputs = writeInputs(dir, totalMiB, inMiB);
            long bytes = 0;
            for (String n : inputs) {
                bytes += Files.size(dir.resolve(n));
            }
            System.out.printf("inputs: %d tar shards, %.1f MiB%n", inputs.size(), bytes / 1048576.0);
            double[] bound = new double[reps];
            double[] job = new double[reps];
            if (nodes > 0) {
                // Store files in a folder of this run: store names repeat in every JVM on the machine.
                Path shm = Path.of("/dev/shm");
                memory = Files.createTempDirectory(Files.isDirectory(shm) ? shm : dir, "croupier-bench-");
            }
            try (Cluster cluster = nodes == 0 ? null : startCluster(memory, dir, nodes)) {
                for (int r = 0; r < reps; r++) {
                    // Best of three: right after a job the disk may still be busy with its
                    // leftovers (a 2-node job's first bound read about half the later two).
                    for (int k = 0; k < 3; k++) {
                        bound[r] = Math.max(bound[r], sequentialCopy(dir, inputs, bytes));
                    }
                    job[r] = reshard(dir, inputs, outMiB, r, cluster);
                    System.out.printf("rep %d: sequential read+write %.0f MB/s, reshard (shuffle) %.0f MB/s, ratio %.2f%n",
                            r, bound[r], job[r], job[r] / bound[r]);
                }
                if (stats && cluster != null) {
                    // Over all reps: per task name count, wall and CPU means; per node totals.
                    System.out.println(cluster.stats());
                }
            }
            System.out.printf("median: %s%n", median(bound, job, 0));
            if (reps > 1) {
                System.out.printf("median of reps 1..%d (warm): %s%n", reps - 1, median(bound, job, 1));
            }
        } finally {
            if (memory != null) {
                deleteTree(memory);
            }
            deleteTree(dir);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static List<String> writeInputs(Path dir, long totalMiB, long shardMiB) throws IOException {
        Files.createDirectories(dir.resolve("in"));
        SplittableRandom random = new SplittableRandom(7);
        byte[] content = new byte[90 * 1024];
        random.nextBytes(content);
        int[] sizes = {90 * 1024, 10 * 1024, 300};
        String[] exts = {".jpg", ".seg.png", ".json"};
        List<String> names = new ArrayList<>();
        long written = 0;
        int record = 0;
        for (int s = 0; written < totalMiB << 20; s++) {
            String name = String.format("in/train-%05d.tar", s);
            try (ShardWriter w = ShardFormat.TAR.create(dir.resolve(name))) {
                while (w.bytesWritten() < shardMiB << 20) {
                    w.beginRecord(String.format("train/%08d", record++), 3);
                    for (int f = 0; f < 3; f++) {
                        content[f] = (byte) record; // distinct bytes per record without regenerating
                        w.writeFile(exts[f], ByteBuffer.wrap(content, 0, sizes[f]));
                    }
                }
                dev.croupier.formats.PendingShard shard = w.finish();
                written += shard.size();
                shard.commit();
            }
            names.add(name);
        }
        return names;
    }

    private static double sequentialCopy(Path dir, List<String> inputs, long bytes) throws IOException {
        byte[] chunk = new byte[1 << 20];
        Path out = dir.resolve("bound.bin");
        long t0 = System.nanoTime();
        try (FileOutputStream o = new FileOutputStream(out.toFile())) {
            for (String n : inputs) {
                try (InputStream in = Files.newInputStream(dir.resolve(n))) {
                    for (int k = in.read(chunk); k >= 0; k = in.read(chunk)) {
                        o.write(chunk, 0, k);
                    }
                }
            }
            o.getFD().sync();
        }
        double mbs = bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
        Files.delete(out);
        return mbs;
    }

    /** Medians of the reps from {@code from} on, and the median of their ratios. */
    private static String median(double[] bound, double[] job, int from) {
        double[] b = Arrays.copyOfRange(bound, from, bound.length);
        double[] j = Arrays.copyOfRange(job, from, job.length);
        double[] ratio = new double[b.length];
        for (int i = 0; i < b.length; i++) {
            ratio[i] = j[i] / b[i];
        }
        Arrays.sort(b);
        Arrays.sort(j);
        Arrays.sort(ratio);
        return String.format("bound %.0f MB/s, reshard %.0f MB/s, ratio %.2f (reps %.2f-%.2f)",
                b[b.length / 2], j[j.length / 2], ratio[ratio.length / 2], ratio[0], ratio[ratio.length - 1]);
    }

    private static Cluster startCluster(Path memory, Path spill, int nodes) throws IOException {
        return Cluster.builder().nodes(nodes).objectStoreBytes(1L << 30).memoryDirectory(memory)
                .spillDirectory(spill).start();
    }

    private static double reshard(Path dir, List<String> inputs, long outMiB, int rep, Cluster cluster)
            throws IOException {
        ReshardSpec spec = ReshardSpec.builder().inputPaths(inputs).outputFormat("out" + rep + "/shard-{00000..99999}.tar")
                .outputShardSize(outMiB + "MiB").algorithm(new Algorithm(Algorithm.Kind.SHUFFLE, false, 42L, null, null))
                .build();
        ReshardResult r;
        long ns;
        if (cluster == null) {
            long t0 = System.nanoTime();
            r = LocalReshard.builder(spec).baseDir(dir).workDir(dir).build().run();
            ns = System.nanoTime() - t0;
        } else {
            long fetched = fetched(cluster);
            long spilled = spilled(cluster);
            ReshardJob job = ReshardJob.builder(spec).baseDir(dir).build();
            long t0 = System.nanoTime();
            r = job.run(cluster);
            ns = System.nanoTime() - t0;
            System.out.printf("  cluster: %d MiB fetched between nodes, %d MiB spilled%n",
                    (fetched(cluster) - fetched) >> 20, (spilled(cluster) - spilled) >> 20);
        }
        long in = r.extraction().bytes();
        System.out.printf("  reshard: %d -> %d shards, %d records, extraction %d ms (memory %d MiB, spilled %d MiB),"
                        + " sort %d ms, creation %d ms%n", r.extraction().shards(), r.outputs().size(),
                r.extraction().records(), r.extraction().elapsed().toMillis(), r.extraction().memoryBytes() >> 20,
                r.extraction().spilledBytes() >> 20, r.sorting().elapsed().toMillis(), r.creation().elapsed().toMillis());
        long fileBytes = 0;
        for (ReshardResult.OutputShard o : r.outputs()) {
            fileBytes += o.fileBytes();
        }
        deleteTree(dir.resolve("out" + rep));
        // Throughput counts shard file bytes written, the same measure as the bound.
        return Math.max(in, fileBytes) / 1e6 / (ns / 1e9);
    }

    private static long fetched(Cluster cluster) {
        return cluster.stats().nodes().stream().mapToLong(n -> n.bytesFetched()).sum();
    }

    private static long spilled(Cluster cluster) {
        return cluster.stats().nodes().stream().mapToLong(n -> n.bytesSpilled()).sum();
    }
}
