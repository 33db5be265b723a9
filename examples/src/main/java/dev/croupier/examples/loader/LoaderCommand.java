package dev.croupier.examples.loader;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.examples.ClusterOptions;
import dev.croupier.examples.CroupierCli;
import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import dev.croupier.shuffle.PartitionOutput;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import dev.croupier.shuffle.records.Checksum;
import dev.croupier.shuffle.records.RandomShuffleJob;
import dev.croupier.shuffle.records.SortBenchmarkRecords;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code croupier loader}: an ML-style data loader. A dataset of 100-byte records lives in the
 * cluster's object stores as blocks; before each epoch a {@link RandomShuffleJob}
 * reshuffles it (seeded per epoch), and a consumer (standing in for a trainer) takes the
 * shuffled partitions in the order they complete, so it starts while later partitions are still
 * being reduced (the paper's pipelined loader). Prints each epoch's time and its time to first
 * partition, and checks that every epoch delivered exactly the dataset's records (their
 * checksum) in an order of its own. Not thread-safe; one run per instance.
 */
public final class LoaderCommand implements CroupierCli.Command {

    /** Default dataset size in records: 50 MB of 100-byte records, a few seconds for the defaults. */
    static final long DEFAULT_RECORDS = 500_000;
    /** Default number of dataset blocks (map tasks). */
    static final int DEFAULT_BLOCKS = 8;
    /** Default number of epochs. */
    static final int DEFAULT_EPOCHS = 3;
    /** Default embedded nodes. */
    static final int DEFAULT_NODES = 4;

    private static final int RECORD = 100;

    private static final String USAGE = """
            usage: croupier loader [options]
              Keeps a dataset of 100-byte records in the object stores, reshuffles it before every epoch
              (RandomShuffleJob, seeded per epoch) and hands the partitions to a consumer as they complete.
              --records N           dataset size in records (default 500000)
              --blocks M            dataset blocks = map tasks (default 8)
              --partitions P        shuffled partitions per epoch (default: as many as blocks; not with --window)
              --epochs E            epochs (default 3)
              --seed S              seed of epoch 0; epoch e's seed derives from it (default 0)
              --window W            partial shuffle: records move only within windows of W records of
                                    their block (default 0: a full shuffle)
              --consume-ms T        milliseconds the consumer spends per partition, standing in for a trainer (default 0)
              --strategy simple|riffle|magnet|push|auto   shuffle strategy (default auto)
            """ + ClusterOptions.usage(DEFAULT_NODES, ClusterOptions.MACHINE_DEFAULT)
            + "\n  --json                print one JSON report on stdout instead of a line per epoch";

    /** What the consumer saw in one epoch. */
    record Epoch(long epoch, double seconds, double firstPartitionSeconds, long records, boolean valid,
                 String orderFingerprint, List<Integer> completionOrder) {}

    @Override
    public int run(String[] args) throws Exception {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("loader", args, Set.of("json"), ClusterOptions.valuedWith("records", "blocks",
                "partitions", "epochs", "seed", "window", "consume-ms", "strategy"));
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        long records = o.longValue("records", DEFAULT_RECORDS, 1, Integer.MAX_VALUE);
        int blocks = o.integer("blocks", DEFAULT_BLOCKS, 1, 100_000);
        int partitions = o.integer("partitions", 0, 1, 100_000);
        int epochs = o.integer("epochs", DEFAULT_EPOCHS, 1, 100_000);
        long seed = o.longValue("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        long window = o.longValue("window", 0, 0, Long.MAX_VALUE);
        long consumeMs = o.longValue("consume-ms", 0, 0, 3_600_000);
        Strategy strategy = o.strategy("strategy", Strategy.AUTO);
        ClusterOptions clusterOptions = ClusterOptions.parse(o, DEFAULT_NODES);
        boolean json = o.flag("json");
        if (window > 0 && partitions > 0) {
            throw new UsageException("--partitions does not go with --window: a partial shuffle keeps one output per block");
        }
        if (blocks > records) {
            throw new UsageException("--blocks = " + blocks + " is more than --records = " + records);
        }

        List<Epoch> done = new ArrayList<>();
        Map<String, Object> report = new LinkedHashMap<>();
        try (Cluster cluster = clusterOptions.start()) {
            int nodes = cluster.aliveNodes().size();
            long t0 = System.nanoTime();
            List<ObjectRef<MemorySegment>> dataset = generate(cluster, records, blocks, seed);
            Checksum expected = Checksum.ZERO;
            for (MemorySegment block : cluster.get(dataset)) {
                expected = expected.plus(SortBenchmarkRecords.checksum(block));
            }
            double generateSeconds = (System.nanoTime() - t0) / 1e9;
            if (!json) {
                System.out.printf(Locale.ROOT, "dataset: %,d records (%,d bytes) in %d blocks, generated in %.2f s;"
                                + " %d nodes, %s, %s%n", records, records * RECORD, blocks, generateSeconds, nodes,
                        strategy, window > 0 ? "window " + window : "full shuffle");
            }
            RandomShuffleJob.Builder job = RandomShuffleJob.builder().inputs(dataset).seed(seed).window(window)
                    .strategy(strategy).name("loader");
            if (partitions > 0) {
                job.partitions(partitions);
            }
            String resolved = null;
            for (long e = 0; e < epochs; e++) {
                Epoch epoch;
                long start = System.nanoTime();
                try (ShuffleResult<MemorySegment> result = job.epoch(e).build().run(cluster)) {
                    resolved = result.strategy().toString();
                    epoch = consume(e, start, result, expected, consumeMs);
                }
                done.add(epoch);
                if (!json) {
                    System.out.printf(Locale.ROOT, "epoch %d  %.3f s  first partition after %.3f s  %d partitions"
                                    + "  %,d records  %s  order %s%n", e, epoch.seconds(), epoch.firstPartitionSeconds(),
                            epoch.completionOrder().size(), epoch.records(),
                            epoch.valid() ? "checksum ok" : "CHECKSUM MISMATCH", epoch.orderFingerprint());
                }
            }
            dataset.forEach(ObjectRef::release);
            report.put("records", records);
            report.put("bytes", records * RECORD);
            report.put("blocks", blocks);
            report.put("nodes", nodes);
            report.put("strategy", resolved);
            report.put("seed", seed);
            report.put("window", window);
            report.put("consume_ms", consumeMs);
            report.put("generate_seconds", generateSeconds);
            report.put("checksum", expected.hex());
        }
        Set<String> orders = new HashSet<>();
        boolean valid = true;
        List<Map<String, Object>> perEpoch = new ArrayList<>();
        for (Epoch e : done) {
            orders.add(e.orderFingerprint());
            valid &= e.valid();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("epoch", e.epoch());
            m.put("seconds", e.seconds());
            m.put("first_partition_seconds", e.firstPartitionSeconds());
            m.put("records", e.records());
            m.put("valid", e.valid());
            m.put("order_fingerprint", e.orderFingerprint());
            m.put("completion_order", e.completionOrder());
            perEpoch.add(m);
        }
        report.put("epochs", perEpoch);
        report.put("distinct_orders", orders.size());
        report.put("valid", valid);
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report));
        } else {
            System.out.printf(Locale.ROOT, "%d epochs, %d distinct orders, %s%n", done.size(), orders.size(),
                    valid ? "every epoch delivered exactly the dataset" : "SOME EPOCH LOST OR ALTERED RECORDS");
        }
        return valid ? 0 : 1;
    }

    /** Makes the dataset inside the cluster: block {@code i} is generated by a task, straight into store memory. */
    static List<ObjectRef<MemorySegment>> generate(Cluster cluster, long records, int blocks, long seed) {
        List<ObjectRef<MemorySegment>> refs = new ArrayList<>(blocks);
        for (int i = 0; i < blocks; i++) {
            long first = records * i / blocks;
            long count = records * (i + 1) / blocks - first;
            refs.add(cluster.task(() -> {
                MemorySegment block = TaskOutput.allocate(count * RECORD);
                SortBenchmarkRecords.generate(seed, first, block);
                return block;
            }).name("loader-generate").remote());
        }
        return refs;
    }

    /**
     * The consumer: takes partitions in completion order, checks them, and fingerprints the
     * epoch's order (partitions combined in partition order, so the fingerprint is the order of
     * the shuffled dataset, not of completion).
     */
    static Epoch consume(long epoch, long start, ShuffleResult<MemorySegment> result, Checksum expected, long consumeMs)
            throws InterruptedException {
        int partitions = result.outputs().size();
        long[] partitionHash = new long[partitions];
        List<Integer> completion = new ArrayList<>(partitions);
        Checksum seen = Checksum.ZERO;
        long records = 0;
        double first = -1;
        for (PartitionOutput<MemorySegment> out : result.inCompletionOrder()) {
            MemorySegment part = out.ref().get();
            if (first < 0) {
                first = (System.nanoTime() - start) / 1e9;
            }
            completion.add(out.partition());
            seen = seen.plus(SortBenchmarkRecords.checksum(part));
            records += part.byteSize() / RECORD;
            partitionHash[out.partition()] = orderHash(part);
            if (consumeMs > 0) {
                Thread.sleep(consumeMs);
            }
        }
        long fingerprint = 0;
        for (long h : partitionHash) {
            fingerprint = mix(fingerprint * 31 + h);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Epoch(epoch, seconds, first, records, seen.equals(expected), String.format("%016x", fingerprint),
                completion);
    }

    /** A hash of the sequence of records' first 8 key bytes: equal only for the same order (with high probability). */
    private static long orderHash(MemorySegment part) {
        long h = 0x9E3779B97F4A7C15L;
        for (long at = 0; at < part.byteSize(); at += RECORD) {
            h = mix(h ^ part.get(ValueLayout.JAVA_LONG_UNALIGNED, at));
        }
        return h;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
