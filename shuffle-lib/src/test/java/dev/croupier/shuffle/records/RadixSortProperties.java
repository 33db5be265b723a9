package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The radix sort over the top bits only gives exactly the order of the full one. */
class RadixSortProperties {

    /**
     * Words whose key bits are one of a few random heads with their low {@code spread} bits
     * random: few heads and a small spread make long runs of words alike in their top bits but not
     * below (the runs' own sort); a wide spread makes every word different. Below the key bits,
     * each word's position, as the sorts' callers put it there.
     */
    @Property(tries = 600)
    void theTopBitsSortGivesTheFullSortsOrder(@ForAll @IntRange(min = 0, max = 5000) int n,
                                               @ForAll @IntRange(min = 1, max = 31) int ordinalBits,
                                               @ForAll @IntRange(min = 1, max = 8) int heads,
                                               @ForAll @IntRange(min = 0, max = 64) int spread,
                                               @ForAll long seed) {
        int fromBit = Math.max(ordinalBits, 64 - Long.numberOfLeadingZeros(Math.max(1, n - 1)));
        Random random = new Random(seed);
        long[] head = new long[heads];
        for (int h = 0; h < heads; h++) {
            head[h] = random.nextLong();
        }
        long spreadMask = spread == 64 ? -1L : (1L << spread) - 1;
        long[] words = new long[n];
        for (int i = 0; i < n; i++) {
            long key = (head[random.nextInt(heads)] & ~spreadMask) | (random.nextLong() & spreadMask);
            words[i] = (key & (-1L << fromBit)) | i;
        }
        long[] expected = words.clone();
        RecordKernels.radixSort(expected, fromBit);
        long differ = 0;
        for (long w : words) {
            differ |= w ^ words[0];
        }
        long[] actual = words.clone();
        RecordKernels.radixSortTop(actual, fromBit, 63 - Long.numberOfLeadingZeros(differ));
        assertArrayEquals(expected, actual);
    }
}
