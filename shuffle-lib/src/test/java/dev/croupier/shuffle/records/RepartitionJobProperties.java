package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleResult;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** RepartitionJob keeps every record, in order, in N outputs whose sizes differ by at most one record. */
class RepartitionJobProperties {

    @Property(tries = 25)
    void outputsAreTheInputInOrderCutIntoNearEqualBlocks(
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
                    .inputs(in).partitions(partitions).build().run(cluster)) {
                List<long[]> parts = RandomShuffleProperties.indices(result);
                assertEquals(partitions, parts.size());
                assertArrayEquals(java.util.stream.LongStream.range(0, total).toArray(), RandomShuffleProperties.flat(parts),
                        "every record, in order");
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
    void outputOfIsTheBlockWhoseRangeHoldsTheRecord(
            @ForAll @IntRange(min = 1, max = 100_000) int total, @ForAll @IntRange(min = 1, max = 1000) int n,
            @ForAll @IntRange(min = 0, max = 99_999) int g) {
        long record = g % total;
        int p = RepartitionJob.outputOf(record, total, n);
        assertTrue((long) p * total / n <= record && record < (long) (p + 1) * total / n,
                "record " + record + " of " + total + " in output " + p + " of " + n);
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
