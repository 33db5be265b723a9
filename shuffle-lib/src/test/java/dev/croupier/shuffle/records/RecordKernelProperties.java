package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.shuffle.PackFrame;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Differential properties of the record kernels against sorting byte arrays with Arrays.compareUnsigned. */
class RecordKernelProperties {

    /** Random records; keys drawn from a small alphabet so that equal prefixes and duplicates occur. */
    static byte[] randomRecords(Random random, RecordLayout layout, int n) {
        byte[] bytes = new byte[n * layout.recordBytes()];
        random.nextBytes(bytes);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < layout.keyBytes(); k++) {
                bytes[i * layout.recordBytes() + k] = (byte) (k < 9 ? random.nextInt(3) * 0x7F : random.nextInt(256));
            }
        }
        return bytes;
    }

    static List<byte[]> records(RecordLayout layout, MemorySegment block) {
        List<byte[]> out = new ArrayList<>();
        for (long off = 0; off < block.byteSize(); off += layout.recordBytes()) {
            out.add(block.asSlice(off, layout.recordBytes()).toArray(ValueLayout.JAVA_BYTE));
        }
        return out;
    }

    static List<byte[]> naiveSort(RecordLayout layout, List<byte[]> records) {
        List<byte[]> sorted = new ArrayList<>(records);
        sorted.sort((a, b) -> Arrays.compareUnsigned(a, 0, layout.keyBytes(), b, 0, layout.keyBytes()));
        return sorted;
    }

    static List<String> multiset(List<byte[]> records) {
        List<String> s = new ArrayList<>();
        for (byte[] r : records) {
            s.add(Arrays.toString(r));
        }
        s.sort(null);
        return s;
    }

    /**
     * Sorts keep every record and order them by key, directly and bucketed; with leading key
     * bytes every record shares, the bytes that differ (and the bucket pass's bits) lie low in
     * the key prefix, next to the ordinals a sort packs below it.
     */
    @Property(tries = 200)
    void sortOrdersByKeyAndKeepsEveryRecord(
            @ForAll @IntRange(min = 0, max = 2000) int n,
            @ForAll @IntRange(min = 1, max = 4) int blocks,
            @ForAll @IntRange(min = 1, max = 24) int keyBytes,
            @ForAll @IntRange(min = 0, max = 8) int sharedKeyBytes,
            @ForAll long seed) {
        RecordLayout layout = new RecordLayout(Math.max(keyBytes, 1) + 7, keyBytes);
        Random random = new Random(seed);
        List<MemorySegment> in = new ArrayList<>();
        List<byte[]> all = new ArrayList<>();
        for (int b = 0; b < blocks; b++) {
            byte[] records = randomRecords(random, layout, n / blocks);
            for (int r = 0; r < records.length; r += layout.recordBytes()) {
                Arrays.fill(records, r, r + Math.min(sharedKeyBytes, keyBytes), (byte) 0x5A);
            }
            MemorySegment block = MemorySegment.ofArray(records);
            in.add(block);
            all.addAll(records(layout, block));
        }
        MemorySegment sorted = RecordKernels.sort(layout, in);
        assertTrue(RecordKernels.isSorted(layout, sorted));
        List<byte[]> expected = naiveSort(layout, all);
        List<byte[]> actual = records(layout, sorted);
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(Arrays.copyOf(expected.get(i), keyBytes), Arrays.copyOf(actual.get(i), keyBytes), "key " + i);
        }
        assertEquals(multiset(all), multiset(actual));
        // the bucketed kernel that sorts of at least BUCKETED_MIN_RECORDS records take
        MemorySegment bucketed = MemorySegment.ofArray(new byte[(int) sorted.byteSize()]);
        if (RecordKernels.bucketSort(layout, in, bucketed)) {
            List<byte[]> viaBuckets = records(layout, bucketed);
            for (int i = 0; i < expected.size(); i++) {
                assertArrayEquals(Arrays.copyOf(expected.get(i), keyBytes), Arrays.copyOf(viaBuckets.get(i), keyBytes),
                        "bucketed key " + i);
            }
            assertEquals(multiset(all), multiset(viaBuckets));
        }
    }

    /** Keys read as a little-endian signed number of up to 8 bytes: an order no bytewise sort gives. */
    static final KeyComparator LITTLE_ENDIAN_SIGNED = (a, ao, b, bo) -> Long.compare(
            a.get(ValueLayout.JAVA_LONG_UNALIGNED, ao), b.get(ValueLayout.JAVA_LONG_UNALIGNED, bo));

    @Property(tries = 100)
    void aUserComparatorOrdersTheSortAndThePartitions(
            @ForAll @IntRange(min = 0, max = 1500) int n,
            @ForAll @IntRange(min = 1, max = 3) int blocks,
            @ForAll @IntRange(min = 1, max = 8) int partitions,
            @ForAll long seed) {
        RecordLayout layout = new RecordLayout(12, 8);
        Random random = new Random(seed);
        List<MemorySegment> in = new ArrayList<>();
        List<byte[]> all = new ArrayList<>();
        for (int b = 0; b < blocks; b++) {
            MemorySegment block = MemorySegment.ofArray(randomRecords(random, layout, n / blocks));
            in.add(block);
            all.addAll(records(layout, block));
        }
        MemorySegment sorted = RecordKernels.sort(layout, in, LITTLE_ENDIAN_SIGNED);
        assertTrue(RecordKernels.isSorted(layout, sorted, LITTLE_ENDIAN_SIGNED));
        List<byte[]> actual = records(layout, sorted);
        assertEquals(multiset(all), multiset(actual));

        Splitters splitters = Splitters.fromSamples(List.of(RecordKernels.sampleKeys(layout, sorted, 40, seed)),
                layout.keyBytes(), partitions, LITTLE_ENDIAN_SIGNED);
        long last = Long.MIN_VALUE;
        for (MemorySegment part : RecordKernels.partition(layout, sorted, splitters)) {
            MemorySegment p = RecordKernels.sort(layout, List.of(part), LITTLE_ENDIAN_SIGNED);
            for (long off = 0; off < p.byteSize(); off += layout.recordBytes()) {
                long key = p.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                assertTrue(key >= last, "partitions follow the comparator's order");
                last = key;
            }
        }
    }

    /** Up to 200 partitions: more than {@link StagedScatter#DIRECT_STREAMS_MAX} are scattered staged. */
    @Property(tries = 200)
    void partitionPutsEveryRecordInItsRangeInInputOrder(
            @ForAll @IntRange(min = 0, max = 2000) int n,
            @ForAll @IntRange(min = 1, max = 200) int partitions,
            @ForAll @IntRange(min = 1, max = 16) int keyBytes,
            @ForAll long seed) {
        RecordLayout layout = new RecordLayout(keyBytes + 3, keyBytes);
        Random random = new Random(seed);
        MemorySegment block = MemorySegment.ofArray(randomRecords(random, layout, n));
        Splitters splitters = Splitters.fromSamples(
                List.of(RecordKernels.sampleKeys(layout, block, 50, seed)), keyBytes, partitions);
        List<MemorySegment> parts = RecordKernels.partition(layout, block, splitters);
        assertEquals(partitions, parts.size());
        List<byte[]> input = records(layout, block);
        List<byte[]> all = new ArrayList<>();
        byte[] previousMax = null;
        for (MemorySegment p : parts) {
            List<byte[]> rs = records(layout, p);
            all.addAll(rs);
            assertTrue(isSubsequence(rs, input), "a partition keeps its records in input order");
            List<byte[]> sorted = naiveSort(layout, rs);
            if (!sorted.isEmpty()) {
                if (previousMax != null) {
                    assertTrue(Arrays.compareUnsigned(previousMax, 0, keyBytes, sorted.getFirst(), 0, keyBytes) <= 0,
                            "ranges do not overlap");
                }
                previousMax = sorted.getLast();
            }
        }
        assertEquals(multiset(records(layout, block)), multiset(all));
    }

    /**
     * Every map kernel's packs hold, as parts, exactly the blocks it makes unpacked: pack g of
     * P holds partitions g, g + P, ... (the range partition, the random scatter and the scatter
     * by position, each up to 200 partitions, so staged too).
     */
    @Property(tries = 150)
    void packsHoldTheUnpackedBlocksAsParts(
            @ForAll @IntRange(min = 0, max = 2000) int n,
            @ForAll @IntRange(min = 1, max = 200) int partitions,
            @ForAll @IntRange(min = 1, max = 200) int packsWanted,
            @ForAll @IntRange(min = 0, max = 2) int kernel,
            @ForAll long seed) {
        RecordLayout layout = new RecordLayout(13, 10);
        int packs = Math.min(packsWanted, partitions);
        MemorySegment block = MemorySegment.ofArray(randomRecords(new Random(seed), layout, n));
        Splitters splitters = Splitters.fromSamples(
                List.of(RecordKernels.sampleKeys(layout, block, 50, seed)), layout.keyBytes(), partitions);
        java.util.function.IntFunction<List<MemorySegment>> map = p -> switch (kernel) {
            case 0 -> RecordKernels.partition(layout, block, splitters, p);
            case 1 -> RunKernels.scatterRandom(layout, 3, block, partitions, p, seed);
            default -> RunKernels.scatterByPosition(layout, 3, block, 7, n + 20, partitions, p);
        };
        List<MemorySegment> plain = map.apply(0);
        List<MemorySegment> packed = map.apply(packs);
        assertEquals(partitions, plain.size());
        assertEquals(packs, packed.size());
        for (int p = 0; p < partitions; p++) {
            MemorySegment part = PackFrame.part(packed.get(p % packs), p / packs);
            assertArrayEquals(plain.get(p).toArray(ValueLayout.JAVA_BYTE), part.toArray(ValueLayout.JAVA_BYTE),
                    "partition " + p + " of " + partitions + " in " + packs + " packs");
        }
    }

    static boolean isSubsequence(List<byte[]> part, List<byte[]> input) {
        int at = 0;
        for (byte[] r : part) {
            while (at < input.size() && !Arrays.equals(input.get(at), r)) {
                at++;
            }
            if (at++ == input.size()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The generator writes each record byte for byte as {@link SortBenchmarkRecords}' layout
     * draws it: a file written before its stores were widened is the same file today.
     */
    @Property(tries = 50)
    void generatedRecordsAreTheDrawnLayoutByteForByte(@ForAll @IntRange(min = 1, max = 300) int n, @ForAll long seed,
                                                      @ForAll long first) {
        MemorySegment made = MemorySegment.ofArray(new byte[n * 100]);
        SortBenchmarkRecords.generate(seed, first, made);
        byte[] expected = new byte[n * 100];
        for (int i = 0; i < n; i++) {
            long index = first + i;
            int at = i * 100;
            long k1 = mix(seed ^ (index * 0x9E3779B97F4A7C15L));
            long k2 = mix(k1 + 0x632BE59BD9B4E019L);
            for (int b = 0; b < 8; b++) {
                expected[at + b] = (byte) (k1 >>> (8 * b)); // the key: k1's bytes, least significant first
            }
            expected[at + 8] = (byte) k2;
            expected[at + 9] = (byte) (k2 >>> 8);
            expected[at + 10] = 0x00;
            expected[at + 11] = 0x11;
            String hex = String.format("%032X", index); // a 128-bit index, high half 0
            for (int d = 0; d < 32; d++) {
                expected[at + 12 + d] = (byte) hex.charAt(d);
            }
            byte[] tag = {(byte) 0x88, (byte) 0x99, (byte) 0xAA, (byte) 0xBB};
            System.arraycopy(tag, 0, expected, at + 44, 4);
            Arrays.fill(expected, at + 48, at + 96, (byte) ('A' + Long.remainderUnsigned(index, 26)));
            byte[] end = {(byte) 0xCC, (byte) 0xDD, (byte) 0xEE, (byte) 0xFF};
            System.arraycopy(end, 0, expected, at + 96, 4);
        }
        assertArrayEquals(expected, made.toArray(ValueLayout.JAVA_BYTE), "records from " + first + ", seed " + seed);
    }

    /**
     * A block's checksum, in memory and read back from a file, is the 128-bit sum of its
     * records' CRC-32s, each over exactly its record's 100 bytes.
     */
    @Property(tries = 30)
    void aChecksumIsTheSumOfItsRecordsCrcsInMemoryAndInAFile(@ForAll @IntRange(min = 1, max = 400) int n,
                                                             @ForAll long seed) throws Exception {
        MemorySegment block = MemorySegment.ofArray(new byte[n * 100]);
        SortBenchmarkRecords.generate(seed, 0, block);
        byte[] bytes = block.toArray(ValueLayout.JAVA_BYTE);
        BigInteger sum = BigInteger.ZERO;
        for (int i = 0; i < n; i++) {
            CRC32 crc = new CRC32();
            crc.update(bytes, i * 100, 100);
            sum = sum.add(BigInteger.valueOf(crc.getValue()));
        }
        Checksum expected = new Checksum(sum.shiftRight(64).longValue(), sum.longValue());
        assertEquals(expected, SortBenchmarkRecords.checksum(block));
        Path file = Files.createTempFile("croupier-checksum-", ".dat");
        try {
            Files.write(file, bytes);
            SortBenchmarkRecords.Validation read = SortBenchmarkRecords.validate(file);
            assertEquals(expected, read.checksum());
            assertEquals(n, read.records());
        } finally {
            Files.delete(file);
        }
    }

    /** The key mixer the layout's note names: SplitMix64's finalizer. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Property(tries = 20)
    void generatedRecordsAreDeterministicPerSeedAndChecksumsIgnoreOrder(
            @ForAll @IntRange(min = 1, max = 500) int n, @ForAll long seed) {
        MemorySegment a = MemorySegment.ofArray(new byte[n * 100]);
        MemorySegment b = MemorySegment.ofArray(new byte[n * 100]);
        SortBenchmarkRecords.generate(seed, 7, a);
        SortBenchmarkRecords.generate(seed, 7, b);
        assertEquals(-1, a.mismatch(b));
        MemorySegment other = MemorySegment.ofArray(new byte[n * 100]);
        SortBenchmarkRecords.generate(seed + 1, 7, other);
        assertTrue(a.mismatch(other) >= 0);
        MemorySegment sorted = RecordKernels.sort(SortBenchmarkRecords.LAYOUT, List.of(a));
        assertEquals(SortBenchmarkRecords.checksum(a), SortBenchmarkRecords.checksum(sorted));
    }
}
