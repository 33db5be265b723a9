package dev.croupier.shuffle.records;

import java.util.HexFormat;

/**
 * The Sort Benchmark's checksum of a set of records: the 128-bit sum of the CRC-32 of every
 * record. Independent of order, so input and sorted output must have the same one. Immutable.
 */
public record Checksum(long high, long low) {

    public static final Checksum ZERO = new Checksum(0, 0);

    /** A running 128-bit sum for hot loops: one object per block, none per record. Not thread-safe. */
    static final class Accumulator {
        private long high;
        private long low;

        void addCrc(long crc32) {
            long sum = low + crc32;
            if (Long.compareUnsigned(sum, low) < 0) {
                high++;
            }
            low = sum;
        }

        Checksum value() {
            return new Checksum(high, low);
        }
    }

    /** The sum of two checksums. */
    public Checksum plus(Checksum other) {
        long sum = low + other.low;
        return new Checksum(high + other.high + (Long.compareUnsigned(sum, low) < 0 ? 1 : 0), sum);
    }

    /** 32 hex digits, most significant first (valsort prints the same way). */
    public String hex() {
        return HexFormat.of().toHexDigits(high) + HexFormat.of().toHexDigits(low);
    }

    @Override
    public String toString() {
        return hex();
    }
}
