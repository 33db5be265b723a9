package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * One spec, every strategy: each property runs against every batch strategy and checks the
 * output against a sequential reference (the sorted input).
 */
class ShuffleStrategyProperties {

    @Provide
    Arbitrary<Strategy> batchStrategies() {
        return Arbitraries.of(Strategy.SIMPLE, Strategy.RIFFLE, Strategy.MAGNET, Strategy.PUSH_PIPELINED, Strategy.AUTO);
    }

    static long[][] randomInputs(long seed, int mappers, int maxLength) {
        Random random = new Random(seed);
        long[][] inputs = new long[mappers][];
        for (int m = 0; m < mappers; m++) {
            inputs[m] = random.longs(random.nextInt(maxLength + 1), 0, LongBlocks.RANGE).toArray();
        }
        return inputs;
    }

    static long[] sortedAll(long[][] inputs) {
        return Arrays.stream(inputs).flatMapToLong(Arrays::stream).sorted().toArray();
    }

    /**
     * The range sort of {@code inputs}; with {@code packedRun} non-null its mapper packs
     * ({@link LongBlocks.RangePacks}, recording its calls under that name).
     */
    static ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> sortJob(
            Cluster cluster, long[][] inputs, int partitions, Strategy strategy, List<ObjectRef<MemorySegment>> refs,
            String packedRun) {
        for (long[] in : inputs) {
            refs.add(cluster.put(LongBlocks.of(in)));
        }
        ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> job = ShuffleJob.builder();
        if (packedRun == null) {
            job.mapper(LongBlocks::rangeMap);
        } else {
            job.packedMapper(new LongBlocks.RangePacks(packedRun));
        }
        return job
                .inputs(refs)
                .merger(LongBlocks::mergeBlocks)
                .reducer(LongBlocks::sortBlocks)
                .partitions(partitions)
                .strategy(strategy)
                .mapsPerRound(3)
                .mergeFactor(2);
    }

    static Cluster cluster(int nodes, Path spill) {
        return Cluster.builder().nodes(nodes).cpusPerNode(2).objectStoreBytes(16L << 20).spillDirectory(spill).start();
    }

    /**
     * With a packing mapper, the push strategies ask each map for one pack per node that serves
     * a reducer, min(nodes, partitions), RIFFLE for one pack, and the others never ask for packs.
     */
    @Property(tries = 60)
    void everyStrategyPreservesTheRecordsAndSortsThem(
            @ForAll("batchStrategies") Strategy strategy,
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 12) int mappers,
            @ForAll @IntRange(min = 1, max = 10) int partitions,
            @ForAll @IntRange(min = 1, max = 4) int nodes,
            @ForAll boolean packed) throws IOException {
        long[][] inputs = randomInputs(seed, mappers, 300);
        String run = packed ? "packs-" + seed + "-" + System.nanoTime() : null;
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(nodes, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            try (ShuffleResult<MemorySegment> result = sortJob(cluster, inputs, partitions, strategy, refs, run).build().run(cluster)) {
                assertEquals(partitions, result.outputs().size());
                long[] all = sortedAll(inputs);
                assertArrayEquals(all, LongBlocks.concat(result.values()), strategy.toString());
                int packs = !packed ? 0 : switch (result.strategy()) {
                    case MAGNET, PUSH_PIPELINED -> Math.min(nodes, partitions);
                    case RIFFLE -> 1;
                    default -> 0;
                };
                if (packed) {
                    List<Integer> asked = List.copyOf(LongBlocks.PACKS_ASKED.getOrDefault(run, new java.util.ArrayDeque<>()));
                    assertEquals(java.util.Collections.nCopies(packs == 0 ? 0 : mappers, packs), asked,
                            "packs asked of the maps by " + result.strategy());
                }
                // A stored object counts an 8-byte frame header; a pack adds a long per part and
                // one for the part count.
                long mapObjects = (long) mappers * (packs == 0 ? partitions : packs);
                long packHeaders = packs == 0 ? 0 : 8L * mappers * (packs + partitions);
                assertEquals(8L * all.length + packHeaders + 8 * mapObjects, phase(result, "map").bytesOut(), "bytes the maps returned by " + result.strategy() + ", packs " + packs + ", " + mappers + " maps, " + partitions + " partitions, " + nodes + " nodes");
                assertEquals(8L * all.length + 8L * partitions, phase(result, "reduce").bytesOut(), "bytes the reducers returned");
                List<Integer> order = new ArrayList<>();
                for (PartitionOutput<MemorySegment> o : result.inCompletionOrder()) {
                    order.add(o.partition());
                }
                order.sort(Comparator.naturalOrder());
                assertEquals(java.util.stream.IntStream.range(0, partitions).boxed().toList(), order);
                result.release(); // stats stay available after the outputs are released
                assertTrue(result.stats().stream().anyMatch(p -> p.name().equals("map") && p.tasks() == mappers));
            }
            refs.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount(), "every intermediate object is freed");
        } finally {
            deleteTree(spill);
        }
    }

    /**
     * A positioned reducer is told, for its partition, the bytes of every lower partition (here
     * 8 bytes per value of a lower range), whatever the strategy and whether speculation ran
     * duplicate maps; the maps' size reports are freed with everything else.
     */
    @Property(tries = 30)
    void positionedReducersAreToldTheBytesOfEveryLowerPartition(
            @ForAll("batchStrategies") Strategy strategy,
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 10) int mappers,
            @ForAll @IntRange(min = 1, max = 8) int partitions,
            @ForAll boolean speculate,
            @ForAll boolean packed) throws IOException {
        long[][] inputs = randomInputs(seed, mappers, 300);
        long[] expected = new long[partitions];
        for (long x : sortedAll(inputs)) {
            for (int r = (int) (x * partitions / LongBlocks.RANGE) + 1; r < partitions; r++) {
                expected[r] += Long.BYTES;
            }
        }
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(3, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> job =
                    sortJob(cluster, inputs, partitions, strategy, refs, packed ? "positions-" + seed : null)
                    .positionedReducer(MemorySegment::byteSize, (p, position, blocks) -> LongBlocks.of(position));
            if (speculate) {
                job.speculateAfter(Duration.ZERO);
            }
            try (ShuffleResult<MemorySegment> result = job.build().run(cluster)) {
                long[] positions = LongBlocks.concat(result.values());
                assertArrayEquals(expected, positions, strategy + (speculate ? " with speculation" : ""));
            }
            refs.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount(), "the size reports are freed too");
        } finally {
            deleteTree(spill);
        }
    }

    static PhaseStats phase(ShuffleResult<?> result, String name) {
        return result.stats().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }

    /** Map attempts per (test run, map index): the first attempt of map 0 is slow. */
    static final ConcurrentHashMap<String, AtomicLong> ATTEMPTS = new ConcurrentHashMap<>();

    @Property(tries = 8)
    void speculationOutrunsAnInjectedStragglerWithoutDuplicateOutput(
            @ForAll("batchStrategies") Strategy strategy, @ForAll long seed) throws IOException {
        long[][] inputs = randomInputs(seed, 6, 200);
        String run = "spec-" + seed + "-" + System.nanoTime();
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(3, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            for (long[] in : inputs) {
                refs.add(cluster.put(LongBlocks.of(in)));
            }
            ShuffleJob<MemorySegment, MemorySegment, MemorySegment> job =
                    ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                    .inputs(refs)
                    .mapper((MemorySegment in, int r) -> {
                        long[] v = LongBlocks.values(in);
                        if (v.length > 0 && ATTEMPTS.computeIfAbsent(run + "/" + Arrays.hashCode(v),
                                k -> new AtomicLong()).getAndIncrement() == 0 && in == in && isFirstInput(v, inputs)) {
                            Thread.sleep(20_000);
                        }
                        return LongBlocks.rangeMap(in, r);
                    })
                    .merger(LongBlocks::mergeBlocks)
                    .reducer(LongBlocks::sortBlocks)
                    .partitions(4)
                    .strategy(strategy)
                    .mapsPerRound(6)
                    .speculateAfter(Duration.ofMillis(100))
                    .build();
            try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                assertArrayEquals(sortedAll(inputs), LongBlocks.concat(result.values()));
                if (inputs[0].length > 0) {
                    assertTrue(result.speculativeDuplicates() >= 1, "the straggler was duplicated");
                }
            }
        } finally {
            deleteTree(spill);
        }
    }

    @Property(tries = 3)
    void streamingSpeculationOutrunsAnInjectedStraggler(@ForAll long seed) throws IOException {
        long[][] inputs = randomInputs(seed, 6, 200);
        String run = "stream-spec-" + seed + "-" + System.nanoTime();
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(3, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            for (long[] in : inputs) {
                refs.add(cluster.put(LongBlocks.of(in)));
            }
            ShuffleJob<MemorySegment, MemorySegment, Long> job = ShuffleJob.<MemorySegment, MemorySegment, Long>builder()
                    .inputs(refs)
                    .mapper((MemorySegment in, int r) -> {
                        long[] v = LongBlocks.values(in);
                        if (v.length > 0 && ATTEMPTS.computeIfAbsent(run + "/" + Arrays.hashCode(v),
                                k -> new AtomicLong()).getAndIncrement() == 0 && isFirstInput(v, inputs)) {
                            Thread.sleep(20_000);
                        }
                        return LongBlocks.rangeMap(in, r);
                    })
                    .streamingReducer((int p, Long state, List<MemorySegment> blocks) ->
                            (state == null ? 0L : state) + Arrays.stream(LongBlocks.concat(blocks)).sum())
                    .partitions(3)
                    .strategy(Strategy.STREAMING)
                    .mapsPerRound(6)
                    .speculateAfter(Duration.ofMillis(100))
                    .build();
            try (ShuffleResult<Long> result = job.run(cluster)) {
                long batch = Arrays.stream(inputs).flatMapToLong(Arrays::stream).sum();
                assertEquals(batch, result.values().stream().mapToLong(Long::longValue).sum());
                if (inputs[0].length > 0) {
                    assertTrue(result.speculativeDuplicates() >= 1, "the straggler was duplicated");
                }
            }
        } finally {
            deleteTree(spill);
        }
    }

    static boolean isFirstInput(long[] v, long[][] inputs) {
        return Arrays.equals(v, inputs[0]);
    }

    @Property(tries = 6)
    void bestEffortMergeCancelsASlowMergeAndStaysCorrect(
            @ForAll("pushStrategies") Strategy strategy, @ForAll long seed, @ForAll boolean packed) throws IOException {
        long[][] inputs = randomInputs(seed, 6, 200);
        String run = "merge-" + seed + "-" + System.nanoTime();
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(2, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            for (long[] in : inputs) {
                refs.add(cluster.put(LongBlocks.of(in)));
            }
            ShuffleJob<MemorySegment, MemorySegment, MemorySegment> job =
                    ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                    .inputs(refs)
                    .indexedMapper(packed ? new LongBlocks.RangePacks(run) : (i, in, r) -> LongBlocks.rangeMap(in, r))
                    .merger((int p, List<MemorySegment> blocks) -> {
                        if (ATTEMPTS.computeIfAbsent(run, k -> new AtomicLong()).getAndIncrement() == 0) {
                            Thread.sleep(30_000);
                        }
                        return LongBlocks.mergeBlocks(p, blocks);
                    })
                    .reducer(LongBlocks::sortBlocks)
                    .partitions(3)
                    .strategy(strategy)
                    .mapsPerRound(3)
                    .mergeFactor(2)
                    .bestEffortMerge(Duration.ofMillis(300))
                    .build();
            try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                assertArrayEquals(sortedAll(inputs), LongBlocks.concat(result.values()));
                assertTrue(result.bestEffortFallbacks() >= 1, "the slow merge was cancelled");
            }
            refs.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount(), "every intermediate object is freed, parts unpacked for reducers too");
        } finally {
            deleteTree(spill);
        }
    }

    @Provide
    Arbitrary<Strategy> pushStrategies() {
        return Arbitraries.of(Strategy.RIFFLE, Strategy.MAGNET, Strategy.PUSH_PIPELINED);
    }

    @Property(tries = 20)
    void skewedPartitionsAreSplitAndStayCorrect(
            @ForAll("batchStrategies") Strategy strategy, @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 8) int mappers, @ForAll boolean packed) throws IOException {
        Random random = new Random(seed);
        long[][] inputs = new long[mappers][];
        for (int m = 0; m < mappers; m++) {
            // nearly everything falls in partition 0 of 4: values below RANGE / 4
            inputs[m] = random.longs(300 + random.nextInt(200), 0, LongBlocks.RANGE / 4).toArray();
        }
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(3, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            ShuffleJob<MemorySegment, MemorySegment, MemorySegment> job = sortJob(cluster, inputs, 4, strategy, refs, packed ? "skew-" + seed : null)
                    .splitPartitionsAbove(2048, (p, b, ways) -> LongBlocks.splitBlock(p, 4, b, ways))
                    .build();
            try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                assertArrayEquals(sortedAll(inputs), LongBlocks.concat(result.values()));
                assertTrue(result.outputs().stream().anyMatch(o -> o.partition() == 0 && o.parts() > 1),
                        "partition 0 was split");
            }
        } finally {
            deleteTree(spill);
        }
    }

    @Property(tries = 20)
    void streamingEndsWithTheBatchAnswerAndReportsEveryRound(
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 12) int mappers,
            @ForAll @IntRange(min = 1, max = 6) int partitions) throws IOException {
        long[][] inputs = randomInputs(seed, mappers, 200);
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(3, spill)) {
            List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
            for (long[] in : inputs) {
                refs.add(cluster.put(LongBlocks.of(in)));
            }
            List<Long> partialTotals = new ArrayList<>();
            ShuffleJob<MemorySegment, MemorySegment, Long> job = ShuffleJob.<MemorySegment, MemorySegment, Long>builder()
                    .inputs(refs)
                    .mapper(LongBlocks::rangeMap)
                    .streamingReducer((int p, Long state, List<MemorySegment> blocks) ->
                            (state == null ? 0L : state) + Arrays.stream(LongBlocks.concat(blocks)).sum())
                    .partitions(partitions)
                    .strategy(Strategy.STREAMING)
                    .mapsPerRound(4)
                    .onRound((round, rounds, states) -> partialTotals.add(states.stream().mapToLong(Long::longValue).sum()))
                    .build();
            try (ShuffleResult<Long> result = job.run(cluster)) {
                long batch = Arrays.stream(inputs).flatMapToLong(Arrays::stream).sum();
                long streamed = result.values().stream().mapToLong(Long::longValue).sum();
                assertEquals(batch, streamed);
                assertEquals((mappers + 3) / 4, partialTotals.size(), "one partial result per round");
                assertEquals(batch, partialTotals.getLast());
                for (int i = 1; i < partialTotals.size(); i++) {
                    assertTrue(partialTotals.get(i) >= partialTotals.get(i - 1), "partial sums only grow");
                }
            }
        } finally {
            deleteTree(spill);
        }
    }

    /** When each map started and each merge ended, by run (tasks run in this JVM, on the embedded nodes). */
    static final ConcurrentHashMap<String, Queue<long[]>> MAP_STARTS = new ConcurrentHashMap<>();
    static final ConcurrentHashMap<String, Queue<long[]>> MERGE_ENDS = new ConcurrentHashMap<>();

    /**
     * PUSH_PIPELINED's backpressure: the maps of round k start only once every merge of round
     * k-2 has ended, so map outputs of at most two rounds exist at once; and each map's block of
     * each partition is merged exactly once. Each map's blocks hold its index alone, and a merge
     * records the indices it merged and when it ended.
     */
    @Property(tries = 10)
    void pushPipelinedStartsARoundsMapsOnlyAfterTheMergesOfTheRoundTwoBefore(
            @ForAll @IntRange(min = 7, max = 16) int mappers,
            @ForAll @IntRange(min = 1, max = 6) int partitions,
            @ForAll @IntRange(min = 1, max = 3) int nodes,
            @ForAll @IntRange(min = 1, max = 3) int perRound) throws IOException {
        String run = "rounds-" + System.nanoTime();
        Queue<long[]> starts = MAP_STARTS.computeIfAbsent(run, k -> new ConcurrentLinkedQueue<>());
        Queue<long[]> ends = MERGE_ENDS.computeIfAbsent(run, k -> new ConcurrentLinkedQueue<>());
        Path spill = Files.createTempDirectory("croupier-shuffle");
        try (Cluster cluster = cluster(nodes, spill)) {
            List<ObjectRef<MemorySegment>> inputs = new ArrayList<>();
            for (int m = 0; m < mappers; m++) {
                inputs.add(cluster.put(LongBlocks.of(m)));
            }
            ShuffleJob<MemorySegment, MemorySegment, MemorySegment> job = ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                    .inputs(inputs)
                    .indexedMapper((m, in, parts) -> {
                        MAP_STARTS.get(run).add(new long[] {m, System.nanoTime()});
                        Thread.sleep(5); // maps long enough for the rounds to overlap
                        List<MemorySegment> blocks = new ArrayList<>();
                        for (int p = 0; p < parts; p++) {
                            blocks.add(LongBlocks.of(m));
                        }
                        return blocks;
                    })
                    .merger((p, blocks) -> {
                        MemorySegment merged = LongBlocks.of(LongBlocks.concat(blocks));
                        long end = System.nanoTime();
                        for (long m : LongBlocks.values(merged)) {
                            MERGE_ENDS.get(run).add(new long[] {m, p, end});
                        }
                        return merged;
                    })
                    .reducer((p, blocks) -> LongBlocks.of(LongBlocks.concat(blocks)))
                    .partitions(partitions)
                    .strategy(Strategy.PUSH_PIPELINED)
                    .mapsPerRound(perRound)
                    .build();
            try (ShuffleResult<MemorySegment> result = job.run(cluster)) {
                for (int p = 0; p < partitions; p++) {
                    long[] got = LongBlocks.values(result.outputs().get(p).ref().get());
                    Arrays.sort(got);
                    assertArrayEquals(LongStream.range(0, mappers).toArray(), got, "partition " + p);
                }
            }
        } finally {
            deleteTree(spill);
        }
        // every map's block of every partition merged once
        assertEquals((long) mappers * partitions, ends.size());
        assertEquals((long) mappers * partitions,
                ends.stream().map(e -> e[0] + "/" + e[1]).distinct().count());
        long[] roundMergedBy = new long[(mappers + perRound - 1) / perRound];
        for (long[] e : ends) {
            int round = (int) (e[0] / perRound);
            roundMergedBy[round] = Math.max(roundMergedBy[round], e[2]);
        }
        for (long[] start : starts) {
            int round = (int) (start[0] / perRound);
            if (round >= 2) {
                assertTrue(start[1] >= roundMergedBy[round - 2], "map " + start[0] + " of round " + round
                        + " started before round " + (round - 2) + "'s merges ended");
            }
        }
        MAP_STARTS.remove(run);
        MERGE_ENDS.remove(run);
    }

    static void deleteTree(Path root) throws IOException {
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
