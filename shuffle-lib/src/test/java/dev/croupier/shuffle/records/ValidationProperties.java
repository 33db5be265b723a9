package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link SortBenchmarkRecords#validate} checks a file in ranges read at once: whatever the
 * ranges, it reports what one pass over the records in order finds.
 */
class ValidationProperties {

    private static final int RECORD = 100;
    private static final int KEY = 10;

    /**
     * Records sorted, then a few swapped, their keys' last byte one of {@code lastByteValues}, so
     * that duplicates are many or few; and, if {@code atAnEdge}, the two records around a chunk's first swapped, so that a
     * duplicate or the first record out of order falls where two ranges meet.
     */
    @Property(tries = 100)
    void anyRangesReportWhatOnePassInOrderFinds(@ForAll @IntRange(min = 0, max = 6000) int n,
                                                @ForAll @IntRange(min = 1, max = 7) int ranges,
                                                @ForAll @IntRange(min = 0, max = 3) int swaps,
                                                @ForAll boolean atAnEdge,
                                                @ForAll @IntRange(min = 1, max = 256) int lastByteValues,
                                                @ForAll long seed) throws Exception {
        Random random = new Random(seed);
        byte[][] records = new byte[n][RECORD];
        for (byte[] r : records) {
            random.nextBytes(r);
            for (int k = 0; k < KEY; k++) {
                r[k] = (byte) (k < 8 ? random.nextInt(2) * 0x80 : k == 8 ? random.nextInt(3) : random.nextInt(lastByteValues));
            }
        }
        Arrays.sort(records, (a, b) -> Arrays.compareUnsigned(a, 0, KEY, b, 0, KEY));
        int edges = (n - 1) / SortBenchmarkRecords.ALIGNED_RECORDS;
        if (atAnEdge && edges > 0) {
            int at = SortBenchmarkRecords.ALIGNED_RECORDS * (1 + random.nextInt(edges));
            swap(records, at - 1, at);
        }
        for (int s = 0; s < swaps && n > 1; s++) {
            swap(records, random.nextInt(n), random.nextInt(n));
        }
        long duplicates = 0;
        long disorder = -1;
        BigInteger sum = BigInteger.ZERO;
        byte[] bytes = new byte[n * RECORD];
        for (int i = 0; i < n; i++) {
            System.arraycopy(records[i], 0, bytes, i * RECORD, RECORD);
            CRC32 crc = new CRC32();
            crc.update(records[i]);
            sum = sum.add(BigInteger.valueOf(crc.getValue()));
            if (i > 0) {
                int c = Arrays.compareUnsigned(records[i - 1], 0, KEY, records[i], 0, KEY);
                if (c == 0) {
                    duplicates++;
                } else if (c > 0 && disorder < 0) {
                    disorder = i;
                }
            }
        }
        SortBenchmarkRecords.Validation expected = new SortBenchmarkRecords.Validation(n, duplicates, disorder,
                new Checksum(sum.shiftRight(64).longValue(), sum.longValue()));
        Path file = Files.createTempFile("croupier-validate-", ".dat");
        try {
            Files.write(file, bytes);
            assertEquals(expected, SortBenchmarkRecords.validate(file,
                    ranges, SortBenchmarkRecords.ALIGNED_RECORDS));
            assertEquals(expected, SortBenchmarkRecords.validate(file));
        } finally {
            Files.delete(file);
        }
    }

    private static void swap(byte[][] records, int i, int j) {
        byte[] t = records[i];
        records[i] = records[j];
        records[j] = t;
    }
}
