package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** RepartitionJob keeps every record, in order, in N outputs whose sizes differ by at most one record. */
class RepartitionJobProperties {

    @Provide
    Arbitrary<Strategy> strategies() {
        return Arbitraries.of(Strategy.SIMPLE, Strategy.RIFFLE, Strategy.MAGNET, Strategy.PUSH_PIPELINED, Strategy.AUTO);
    }

    @Property(tries = 25)
    void outputsAreTheInputInOrderCutIntoNearEqualBlocks(
            @ForAll("strategies") Strategy strategy,
            @ForAll @IntRange(min = 1, max = 6) int mappers,
            @ForAll @IntRange(min = 1, max = 9) int partitions,
            @ForAll @IntRange(min = 0, max = 400) int maxPerInput,
            @ForAll long seed) throws IOException {
        Path spill = Files.createTempDirectory("croupier-repartition");
        try (Cluster cluster = Cluster.builder().nodes(2).objectStoreBytes(16L << 20).spillDirectory(spill).start()) {
            Random random = new Random(seed);
            int[] sizes = new int[mappers];
            for (int i = 0; i < mappers; i++) {
                sizes[i] = random.nextInt(maxPerInput + 1);
            }
            List<ObjectRef<MemorySegment>> in = RandomShuffleProperties.inputs(cluster, sizes);
            long total = Arrays.stream(sizes).sum();
            try (ShuffleResult<MemorySegment> result = RepartitionJob.builder().layout(RandomShuffleProperties.LAYOUT)
                    .inputs(in).partitions(partitions).strategy(strategy).build().run(cluster)) {
                List<long[]> parts = RandomShuffleProperties.indices(result);
                assertEquals(partitions, parts.size());
                assertArrayEquals(java.util.stream.LongStream.range(0, total).toArray(), RandomShuffleProperties.flat(parts),
                        "every record, in order, with " + strategy);
                for (long[] part : parts) {
                    assertTrue(part.length == total / partitions || part.length == total / partitions + 1,
                            part.length + " records in an output of " + total + " / " + partitions);
                }
            }
            in.forEach(ObjectRef::release);
            assertEquals(0, cluster.objectCount());
        } finally {
            RandomShuffleProperties.deleteTree(spill);
        }
    }

    @Property(tries = 200)
    void outputRangesTileTheRecordsAndDifferByAtMostOne(
            @ForAll @IntRange(min = 0, max = 1_000_000) int smallTotal, @ForAll @IntRange(min = 1, max = 1000) int n,
            @ForAll boolean huge) {
        long total = huge ? Long.MAX_VALUE / 3 - smallTotal : smallTotal;
        assertEquals(0, RunKernels.rangeStart(0, total, n));
        assertEquals(total, RunKernels.rangeStart(n, total, n));
        for (int p = 0; p < n; p++) {
            long size = RunKernels.rangeStart(p + 1, total, n) - RunKernels.rangeStart(p, total, n);
            assertTrue(size == total / n || size == total / n + 1, "output " + p + " of " + n + " holds " + size);
        }
    }

    @org.junit.jupiter.api.Test
    void anInputOfPartRecordsIsRefusedWithItsIndex() throws IOException {
        Path spill = Files.createTempDirectory("croupier-repartition");
        try (Cluster cluster = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(spill).start()) {
            List<ObjectRef<MemorySegment>> in = new java.util.ArrayList<>(RandomShuffleProperties.inputs(cluster, new int[] {2}));
            in.add(cluster.put(MemorySegment.ofArray(new byte[20])));
            RuntimeException e = assertThrows(RuntimeException.class, () -> RepartitionJob.builder()
                    .layout(RandomShuffleProperties.LAYOUT).inputs(in).partitions(2).build().run(cluster));
            String message = String.valueOf(e.getMessage()) + " / " + e.getCause();
            assertTrue(message.contains("input 1") && message.contains("20 bytes"), message);
            in.forEach(ObjectRef::release);
        } finally {
            RandomShuffleProperties.deleteTree(spill);
        }
    }

    @org.junit.jupiter.api.Test
    void theBuilderNamesTheBadKnob() throws IOException {
        CroupierException e = assertThrows(CroupierException.class, () -> RepartitionJob.builder().partitions(1).build());
        assertTrue(e.getMessage().contains("inputs"), e.getMessage());
        Path spill = Files.createTempDirectory("croupier-repartition");
        try (Cluster cluster = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(spill).start()) {
            List<ObjectRef<MemorySegment>> in = RandomShuffleProperties.inputs(cluster, new int[] {2});
            e = assertThrows(CroupierException.class, () -> RepartitionJob.builder().inputs(in).partitions(0).build());
            assertTrue(e.getMessage().contains("partitions = 0"), e.getMessage());
            in.forEach(ObjectRef::release);
        } finally {
            RandomShuffleProperties.deleteTree(spill);
        }
    }
}
