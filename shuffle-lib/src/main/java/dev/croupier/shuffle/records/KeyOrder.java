package dev.croupier.shuffle.records;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Bytewise unsigned key comparison over records in memory, with the 8-byte big-endian prefix of
 * a key as an unsigned long: comparing prefixes first decides almost every comparison of random
 * keys in one instruction. Stateless.
 */
final class KeyOrder {
    private static final ValueLayout.OfLong BIG_ENDIAN_LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private KeyOrder() {}

    /** The first 8 key bytes (zero-padded if the key is shorter) as a big-endian long. */
    static long prefix(MemorySegment block, long offset, int keyBytes) {
        if (keyBytes >= 8) {
            return block.get(BIG_ENDIAN_LONG, offset);
        }
        long p = 0;
        for (int i = 0; i < 8; i++) {
            p = (p << 8) | (i < keyBytes ? block.get(ValueLayout.JAVA_BYTE, offset + i) & 0xFF : 0);
        }
        return p;
    }

    /** Compares the key bytes after the prefix (bytes 8..keyBytes), unsigned. */
    static int compareSuffix(MemorySegment a, long aOffset, MemorySegment b, long bOffset, int keyBytes) {
        for (int i = 8; i < keyBytes; i++) {
            int x = a.get(ValueLayout.JAVA_BYTE, aOffset + i) & 0xFF;
            int y = b.get(ValueLayout.JAVA_BYTE, bOffset + i) & 0xFF;
            if (x != y) {
                return x - y;
            }
        }
        return 0;
    }

    /** Compares two whole keys, unsigned bytewise. */
    static int compare(MemorySegment a, long aOffset, MemorySegment b, long bOffset, int keyBytes) {
        int c = Long.compareUnsigned(prefix(a, aOffset, keyBytes), prefix(b, bOffset, keyBytes));
        return c != 0 ? c : compareSuffix(a, aOffset, b, bOffset, keyBytes);
    }
}
