package dev.croupier.examples.aggregate;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.examples.ClusterOptions;
import dev.croupier.examples.CroupierCli;
import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import dev.croupier.shuffle.kv.Aggregate;
import dev.croupier.shuffle.kv.GroupByJob;
import dev.croupier.shuffle.kv.KvBlock;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code croupier aggregate}: online aggregation with the {@code STREAMING} strategy, after the
 * paper's page-view example. Synthetic page views (key: a page name; value: a view count, an
 * 8-byte long; page popularity skewed) live as key/value blocks in the object stores; a
 * {@link GroupByJob} sums views per page in rounds of map tasks. After each round it prints the
 * partial answer (total views so far, the total extrapolated from the fraction of input read,
 * and the top pages), and at the end checks that the final answer equals a batch group-by of
 * the same data. Not thread-safe; one run per instance.
 */
public final class AggregateCommand implements CroupierCli.Command {

    /** Default number of page-view entries. */
    static final long DEFAULT_RECORDS = 2_000_000;
    /** Default number of distinct pages. */
    static final int DEFAULT_KEYS = 10_000;
    /** Default number of input blocks (map tasks). */
    static final int DEFAULT_BLOCKS = 16;
    /** Default map tasks per round: a partial answer every 2 blocks. */
    static final int DEFAULT_MAPS_PER_ROUND = 2;
    /** Default number of reducers. */
    static final int DEFAULT_PARTITIONS = 4;
    /** Default number of top pages printed per round. */
    static final int DEFAULT_TOP = 3;

    private static final String USAGE = """
            usage: croupier aggregate [options]
              Sums synthetic page views per page with a streaming group-by, printing the partial answer
              after every round of maps, then checks the final answer against a batch group-by.
              --records N           page-view entries (default 2000000)
              --keys K              distinct pages (default 10000)
              --blocks M            input blocks = map tasks (default 16)
              --maps-per-round R    map tasks per round (default 2)
              --partitions P        reducers (default 4)
              --top T               top pages shown per round (default 3)
              --seed S              data seed (default 0)
              --batch-strategy simple|riffle|magnet|push|auto   strategy of the batch check (default simple)
            """ + ClusterOptions.usage(4, ClusterOptions.MACHINE_DEFAULT)
            + "\n  --json                print one JSON report on stdout instead of a line per round";

    @Override
    public int run(String[] args) throws Exception {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("aggregate", args, Set.of("json"), ClusterOptions.valuedWith("records", "keys",
                "blocks", "maps-per-round", "partitions", "top", "seed", "batch-strategy"));
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        long records = o.longValue("records", DEFAULT_RECORDS, 1, 1L << 40);
        int keys = o.integer("keys", DEFAULT_KEYS, 1, 100_000_000);
        int blocks = o.integer("blocks", DEFAULT_BLOCKS, 1, 100_000);
        int mapsPerRound = o.integer("maps-per-round", DEFAULT_MAPS_PER_ROUND, 1, 100_000);
        int partitions = o.integer("partitions", DEFAULT_PARTITIONS, 1, 100_000);
        int top = o.integer("top", DEFAULT_TOP, 0, 1000);
        long seed = o.longValue("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        Strategy batchStrategy = o.strategy("batch-strategy", Strategy.SIMPLE);
        ClusterOptions clusterOptions = ClusterOptions.parse(o, 4);
        boolean json = o.flag("json");
        if (records / blocks > Integer.MAX_VALUE / 32) {
            throw new UsageException("--records / --blocks = " + records / blocks + " entries per block is too many;"
                    + " use more --blocks");
        }

        Map<String, Object> report = new LinkedHashMap<>();
        List<Map<String, Object>> rounds = new ArrayList<>();
        boolean equal;
        try (Cluster cluster = clusterOptions.start()) {
            int nodes = cluster.aliveNodes().size();
            long t0 = System.nanoTime();
            List<ObjectRef<MemorySegment>> input = generate(cluster, records, keys, blocks, seed);
            cluster.wait(input, input.size(), java.time.Duration.ofHours(1));
            double generateSeconds = (System.nanoTime() - t0) / 1e9;
            if (!json) {
                System.out.printf(Locale.ROOT, "input: %,d page views of %,d pages in %d blocks, generated in %.2f s;"
                        + " streaming %d maps per round over %d nodes%n", records, keys, blocks, generateSeconds,
                        mapsPerRound, nodes);
            }

            long start = System.nanoTime();
            Map<String, Long> streamed;
            GroupByJob streaming = GroupByJob.builder().inputs(input).aggregate(Aggregate.LONG_SUM).partitions(partitions)
                    .strategy(Strategy.STREAMING).mapsPerRound(mapsPerRound).name("aggregate-streaming")
                    .onRound((round, total, states) -> {
                        Map<String, Object> r = partial(round, total, states, blocks, mapsPerRound, top,
                                (System.nanoTime() - start) / 1e9);
                        rounds.add(r);
                        if (!json) {
                            printRound(r);
                        }
                    })
                    .build();
            try (ShuffleResult<MemorySegment> result = streaming.run(cluster)) {
                streamed = read(result.values());
            }
            double streamingSeconds = (System.nanoTime() - start) / 1e9;

            long batchStart = System.nanoTime();
            Map<String, Long> batch;
            try (ShuffleResult<MemorySegment> result = GroupByJob.builder().inputs(input).aggregate(Aggregate.LONG_SUM)
                    .partitions(partitions).strategy(batchStrategy).name("aggregate-batch").build().run(cluster)) {
                batch = read(result.values());
            }
            double batchSeconds = (System.nanoTime() - batchStart) / 1e9;
            input.forEach(ObjectRef::release);

            equal = streamed.equals(batch);
            long finalTotal = streamed.values().stream().mapToLong(Long::longValue).sum();
            for (Map<String, Object> r : rounds) {
                long estimate = (Long) r.get("estimated_total");
                r.put("estimate_error", finalTotal == 0 ? 0.0 : Math.abs(estimate - finalTotal) / (double) finalTotal);
            }
            report.put("records", records);
            report.put("keys", keys);
            report.put("distinct_keys_seen", streamed.size());
            report.put("blocks", blocks);
            report.put("maps_per_round", mapsPerRound);
            report.put("partitions", partitions);
            report.put("nodes", nodes);
            report.put("generate_seconds", generateSeconds);
            report.put("streaming_seconds", streamingSeconds);
            report.put("first_partial_seconds", rounds.isEmpty() ? null : rounds.getFirst().get("seconds"));
            report.put("batch_strategy", batchStrategy.toString());
            report.put("batch_seconds", batchSeconds);
            report.put("final_total", finalTotal);
            report.put("final_top", topOf(streamed, top));
            report.put("final_equals_batch", equal);
            report.put("rounds", rounds);
        }
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(report));
        } else {
            System.out.printf(Locale.ROOT, "final: total %,d views over %,d pages, top %s%n", (Long) report.get("final_total"),
                    (Integer) report.get("distinct_keys_seen"), format(report.get("final_top")));
            System.out.printf(Locale.ROOT, "streaming %.3f s (first partial answer after %.3f s), batch (%s) %.3f s;"
                            + " final answer %s the batch answer%n", (Double) report.get("streaming_seconds"),
                    (Double) report.get("first_partial_seconds"), report.get("batch_strategy"),
                    (Double) report.get("batch_seconds"), equal ? "equals" : "DIFFERS FROM");
        }
        return equal ? 0 : 1;
    }

    /** Fixed-width page names, so a block's size is known before it is written. */
    static String pageName(int page) {
        return String.format(Locale.ROOT, "page-%08d", page);
    }

    private static final int KEY_BYTES = pageName(0).length();

    /**
     * Makes the input inside the cluster, one task per block: entries (page, views) with pages
     * skewed towards low numbers (the cube of a uniform draw) and 1 to 100 views each.
     */
    static List<ObjectRef<MemorySegment>> generate(Cluster cluster, long records, int keys, int blocks, long seed) {
        List<ObjectRef<MemorySegment>> refs = new ArrayList<>(blocks);
        for (int i = 0; i < blocks; i++) {
            int block = i;
            int n = (int) (records * (i + 1) / blocks - records * i / blocks);
            refs.add(cluster.task(() -> {
                SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + block);
                KvBlock.Builder out = new KvBlock.Builder(n, n * KvBlock.entryBytes(KEY_BYTES, 8));
                MemorySegment key = MemorySegment.ofArray(new byte[KEY_BYTES]);
                MemorySegment value = MemorySegment.ofArray(new long[1]);
                for (int e = 0; e < n; e++) {
                    double u = random.nextDouble();
                    writeName(key, (int) (u * u * u * keys));
                    value.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 1 + random.nextInt(100));
                    out.add(key, 0, KEY_BYTES, value, 0, 8);
                }
                return out.build();
            }).name("aggregate-generate").remote());
        }
        return refs;
    }

    /** Writes {@code page-NNNNNNNN} into {@code key} without making a String per entry. */
    private static void writeName(MemorySegment key, int page) {
        byte[] prefix = {'p', 'a', 'g', 'e', '-'};
        for (int i = 0; i < prefix.length; i++) {
            key.set(ValueLayout.JAVA_BYTE, i, prefix[i]);
        }
        for (int i = KEY_BYTES - 1; i >= prefix.length; i--) {
            key.set(ValueLayout.JAVA_BYTE, i, (byte) ('0' + page % 10));
            page /= 10;
        }
    }

    /** The partial answer of one round: what an online-aggregation user sees. */
    static Map<String, Object> partial(int round, int total, List<MemorySegment> states, int blocks, int mapsPerRound,
                                       int top, double seconds) {
        Map<String, Long> sums = read(states);
        long sum = sums.values().stream().mapToLong(Long::longValue).sum();
        int mapsDone = Math.min(blocks, (round + 1) * mapsPerRound);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("round", round + 1);
        r.put("rounds", total);
        r.put("seconds", seconds);
        r.put("maps_done", mapsDone);
        r.put("blocks", blocks);
        r.put("partial_total", sum);
        // Blocks hold near-equal numbers of entries, so the fraction of maps done is the sample fraction.
        r.put("estimated_total", Math.round(sum * (double) blocks / mapsDone));
        r.put("top", topOf(sums, top));
        return r;
    }

    private static void printRound(Map<String, Object> r) {
        System.out.printf(Locale.ROOT, "round %d/%d  %.3f s  %d/%d blocks read  partial total %,d  estimated total %,d"
                        + "  top %s%n", (Integer) r.get("round"), (Integer) r.get("rounds"), (Double) r.get("seconds"),
                (Integer) r.get("maps_done"), (Integer) r.get("blocks"), (Long) r.get("partial_total"),
                (Long) r.get("estimated_total"), format(r.get("top")));
    }

    private static String format(Object top) {
        StringBuilder sb = new StringBuilder();
        for (Object o : (List<?>) top) {
            Map<?, ?> m = (Map<?, ?>) o;
            sb.append(sb.isEmpty() ? "" : ", ").append(m.get("key")).append('=').append(m.get("value"));
        }
        return sb.toString();
    }

    /** The {@code n} largest sums, largest first (ties by key). */
    static List<Map<String, Object>> topOf(Map<String, Long> sums, int n) {
        return sums.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .limit(n)
                .map(e -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("key", e.getKey());
                    m.put("value", e.getValue());
                    return m;
                })
                .toList();
    }

    /** Every (key, 8-byte sum) of state blocks, on the driver (one entry per distinct page, not per view). */
    static Map<String, Long> read(List<MemorySegment> blocks) {
        Map<String, Long> out = new HashMap<>();
        for (MemorySegment block : blocks) {
            KvBlock.Cursor c = new KvBlock.Cursor(block);
            while (c.next()) {
                String key = new String(block.asSlice(c.keyOffset(), c.keyLength()).toArray(ValueLayout.JAVA_BYTE),
                        StandardCharsets.UTF_8);
                out.merge(key, block.get(ValueLayout.JAVA_LONG_UNALIGNED, c.valueOffset()), Long::sum);
            }
        }
        return out;
    }
}
