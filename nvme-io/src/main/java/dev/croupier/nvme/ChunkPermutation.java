package dev.croupier.nvme;

/**
 * A seeded pseudo-random permutation of {@code [0, n)}, evaluated one index at a time in O(1)
 * time and memory.
 *
 * <p>Design note: a four-round Feistel network over the smallest even-width bit domain
 * {@code [0, 4^k) >= n}, with cycle walking to stay inside {@code [0, n)} (Black and Rogaway,
 * "Ciphers with arbitrary finite domains", 2002). The domain is below {@code 4n}, so a lookup
 * walks fewer than four times on average. Used to order the chunks of an epoch when sampling
 * without replacement: a 4 TiB file has a billion 4 KiB chunks, too many to shuffle in an
 * array. The rounds use the SplitMix64 finaliser as the round function; statistical quality
 * is plenty for shuffling training data, this is not cryptography. Immutable, thread-safe.
 */
final class ChunkPermutation {

    private static final int ROUNDS = 4;

    private final long n;
    private final int halfBits;
    private final long mask;
    private final long[] roundKeys = new long[ROUNDS];

    ChunkPermutation(long n, long key) {
        if (n < 1) {
            throw new IllegalArgumentException("permutation size n = " + n + "; must be >= 1");
        }
        this.n = n;
        int bits = 64 - Long.numberOfLeadingZeros(Math.max(1, n - 1));
        this.halfBits = Math.max(1, (bits + 1) / 2);
        this.mask = (1L << halfBits) - 1;
        long k = key;
        for (int i = 0; i < ROUNDS; i++) {
            k = mix(k + 0x9E3779B97F4A7C15L);
            roundKeys[i] = k;
        }
    }

    /** The image of {@code index}, in {@code [0, n)}; distinct indices give distinct images. */
    long apply(long index) {
        if (index < 0 || index >= n) {
            throw new IndexOutOfBoundsException("index " + index + " outside [0, " + n + ")");
        }
        long x = index;
        do {
            x = encrypt(x);
        } while (x >= n);
        return x;
    }

    private long encrypt(long x) {
        long left = x >>> halfBits;
        long right = x & mask;
        for (long roundKey : roundKeys) {
            long next = left ^ (mix(right ^ roundKey) & mask);
            left = right;
            right = next;
        }
        return (left << halfBits) | right;
    }

    /** SplitMix64's finaliser (Steele, Lea and Flood 2014). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
