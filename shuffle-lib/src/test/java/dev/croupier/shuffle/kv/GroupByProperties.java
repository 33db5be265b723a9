package dev.croupier.shuffle.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** GroupByJob against a sequential map, for every strategy; streaming's rounds converge on the batch answer. */
class GroupByProperties {

    @Provide
    Arbitrary<Strategy> strategies() {
        return Arbitraries.of(Strategy.SIMPLE, Strategy.RIFFLE, Strategy.MAGNET, Strategy.PUSH_PIPELINED, Strategy.STREAMING);
    }

    /** A key/value block of {@code n} random entries: short keys from a small alphabet (so keys repeat), 8-byte values. */
    static MemorySegment randomBlock(Random random, int n, Map<String, long[]> expected) {
        List<byte[]> keys = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            byte[] key = new byte[random.nextInt(12)];
            for (int k = 0; k < key.length; k++) {
                key[k] = (byte) random.nextInt(3);
            }
            keys.add(key);
            bytes += KvBlock.entryBytes(key.length, 8);
        }
        KvBlock.Builder b = new KvBlock.Builder(n, bytes);
        MemorySegment value = MemorySegment.ofArray(new byte[8]);
        for (byte[] key : keys) {
            long v = random.nextLong();
            value.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
            b.add(MemorySegment.ofArray(key), 0, key.length, value, 0, 8);
            long[] sumAndCount = expected.computeIfAbsent(HexFormat.of().formatHex(key), k -> new long[2]);
            sumAndCount[0] += v;
            sumAndCount[1]++;
        }
        return b.build();
    }

    /** Every key of the output blocks with its 8-byte state; fails on a key seen twice. */
    static Map<String, Long> read(List<MemorySegment> blocks) {
        Map<String, Long> out = new TreeMap<>();
        for (MemorySegment block : blocks) {
            KvBlock.Cursor c = new KvBlock.Cursor(block);
            while (c.next()) {
                String key = HexFormat.of().formatHex(block.asSlice(c.keyOffset(), c.keyLength()).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(8, c.valueLength());
                assertNull(out.put(key, block.get(ValueLayout.JAVA_LONG_UNALIGNED, c.valueOffset())), "key " + key + " twice");
            }
        }
        return out;
    }

    static Map<String, Long> column(Map<String, long[]> expected, int i) {
        Map<String, Long> out = new TreeMap<>();
        expected.forEach((k, v) -> out.put(k, v[i]));
        return out;
    }

    /** A map's packs hold, as parts, exactly its blocks unpacked: pack g of P holds partitions g, g + P, ... */
    @Property(tries = 100)
    void aCombinersPacksHoldItsBlocksAsParts(
            @ForAll @IntRange(min = 0, max = 400) int n,
            @ForAll @IntRange(min = 1, max = 40) int partitions,
            @ForAll @IntRange(min = 1, max = 40) int packsWanted,
            @ForAll long seed) {
        int packs = Math.min(packsWanted, partitions);
        MemorySegment input = randomBlock(new Random(seed), n, new java.util.HashMap<>());
        List<MemorySegment> plain = GroupByJob.combine(Aggregate.LONG_SUM, input, partitions, 0);
        List<MemorySegment> packed = GroupByJob.combine(Aggregate.LONG_SUM, input, partitions, packs);
        assertEquals(partitions, plain.size());
        assertEquals(packs, packed.size());
        for (int p = 0; p < partitions; p++) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(plain.get(p).toArray(ValueLayout.JAVA_BYTE),
                    dev.croupier.shuffle.PackFrame.part(packed.get(p % packs), p / packs).toArray(ValueLayout.JAVA_BYTE),
                    "partition " + p + " of " + partitions + " in " + packs + " packs");
        }
    }

    @Property(tries = 20)
    void groupByEqualsASequentialAggregation(
            @ForAll("strategies") Strategy strategy,
            @ForAll @IntRange(min = 1, max = 7) int mappers,
            @ForAll @IntRange(min = 1, max = 6) int partitions,
            @ForAll @IntRange(min = 0, max = 300) int perMapper,
            @ForAll long seed) throws IOException {
        Path spill = Files.createTempDirectory("croupier-group-by");
        try (Cluster cluster = Cluster.builder().nodes(3).cpusPerNode(2).objectStoreBytes(16L << 20)
                .spillDirectory(spill).smallObjectBytes(256).start()) {
            Random random = new Random(seed);
            Map<String, long[]> expected = new TreeMap<>();
            List<ObjectRef<MemorySegment>> in = new ArrayList<>();
            for (int i = 0; i < mappers; i++) {
                in.add(cluster.put(randomBlock(random, random.nextInt(perMapper + 1), expected)));
            }
            for (Aggregate aggregate : List.of(Aggregate.LONG_SUM, Aggregate.COUNT)) {
                List<Map<String, Long>> rounds = new ArrayList<>();
                GroupByJob.Builder job = GroupByJob.builder().inputs(in).aggregate(aggregate).partitions(partitions)
                        .strategy(strategy);
                if (strategy == Strategy.STREAMING) {
                    job.mapsPerRound(2).onRound((round, total, states) -> rounds.add(read(states)));
                }
                try (ShuffleResult<MemorySegment> result = job.build().run(cluster)) {
                    Map<String, Long> actual = read(result.values());
                    assertEquals(column(expected, aggregate == Aggregate.COUNT ? 1 : 0), actual, strategy + " " + aggregate);
                }
                if (strategy == Strategy.STREAMING) {
                    assertEquals((mappers + 1) / 2, rounds.size(), "one partial result per round");
                    assertEquals(column(expected, aggregate == Aggregate.COUNT ? 1 : 0), rounds.getLast(),
                            "the last round's partial result is the batch answer");
                    if (aggregate == Aggregate.COUNT) {
                        for (int r = 1; r < rounds.size(); r++) {
                            Map<String, Long> before = rounds.get(r - 1);
                            Map<String, Long> after = rounds.get(r);
                            before.forEach((k, v) -> assertTrue(after.get(k) >= v, "counts only grow"));
                        }
                    }
                }
            }
            in.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount());
        } finally {
            deleteTree(spill);
        }
    }

    @Property(tries = 10)
    void aSkewedPartitionIsSplitByASecondHashAndStaysCorrect(
            @ForAll("batchStrategies") Strategy strategy,
            @ForAll @IntRange(min = 1, max = 2) int partitions,
            @ForAll long seed) throws IOException {
        Path spill = Files.createTempDirectory("croupier-group-by");
        try (Cluster cluster = Cluster.builder().nodes(2).cpusPerNode(2).objectStoreBytes(16L << 20)
                .spillDirectory(spill).smallObjectBytes(256).start()) {
            Random random = new Random(seed);
            Map<String, long[]> expected = new TreeMap<>();
            List<ObjectRef<MemorySegment>> in = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                in.add(cluster.put(randomBlock(random, 200, expected)));
            }
            try (ShuffleResult<MemorySegment> result = GroupByJob.builder().inputs(in).aggregate(Aggregate.LONG_SUM)
                    .partitions(partitions).strategy(strategy).splitPartitionsAbove(512).build().run(cluster)) {
                assertEquals(column(expected, 0), read(result.values()), "every key once, with its sum");
                assertTrue(result.outputs().stream().anyMatch(o -> o.parts() > 1), "a partition was split");
            }
            in.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount());
        } finally {
            deleteTree(spill);
        }
    }

    @Provide
    Arbitrary<Strategy> batchStrategies() {
        return Arbitraries.of(Strategy.SIMPLE, Strategy.RIFFLE, Strategy.MAGNET, Strategy.PUSH_PIPELINED, Strategy.AUTO);
    }

    @org.junit.jupiter.api.Test
    void aCorruptBlockNamesTheEntryAndItsOffset() {
        MemorySegment block = randomBlock(new Random(1), 3, new TreeMap<>());
        MemorySegment bad = MemorySegment.ofArray(block.toArray(ValueLayout.JAVA_BYTE));
        bad.set(ValueLayout.JAVA_INT_UNALIGNED, KvBlock.HEADER_BYTES + 4, 1 << 20); // first value's length
        KvBlock.Cursor c = new KvBlock.Cursor(bad);
        CroupierException e = assertThrows(CroupierException.class, c::next);
        assertTrue(e.getMessage().contains("entry 0 at byte offset 8"), e.getMessage());
        e = assertThrows(CroupierException.class, () -> new KvBlock.Cursor(MemorySegment.ofArray(new byte[16])));
        assertTrue(e.getMessage().contains("not a key/value block"), e.getMessage());
    }

    @org.junit.jupiter.api.Test
    void theBuilderNamesTheBadKnob() throws IOException {
        Path spill = Files.createTempDirectory("croupier-group-by");
        try (Cluster cluster = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(spill).start()) {
            List<ObjectRef<MemorySegment>> in = List.of(cluster.put(randomBlock(new Random(2), 5, new TreeMap<>())));
            CroupierException e = assertThrows(CroupierException.class, () -> GroupByJob.builder().inputs(in).build());
            assertTrue(e.getMessage().contains("aggregate = null"), e.getMessage());
            e = assertThrows(CroupierException.class, () -> GroupByJob.builder().inputs(in).aggregate(Aggregate.COUNT)
                    .onRound((r, n, s) -> { }).build());
            assertTrue(e.getMessage().contains("onRound"), e.getMessage());
            e = assertThrows(CroupierException.class, () -> GroupByJob.builder().inputs(in).aggregate(Aggregate.COUNT)
                    .strategy(Strategy.STREAMING).splitPartitionsAbove(100).build());
            assertTrue(e.getMessage().contains("splitPartitionsAbove = 100"), e.getMessage());
            in.forEach(ObjectRef::release);
        } finally {
            deleteTree(spill);
        }
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
