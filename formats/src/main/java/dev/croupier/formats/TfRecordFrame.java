package dev.croupier.formats;

import java.util.zip.CRC32C;

/**
 * The TFRecord record frame, as TensorFlow writes it. Integers are little-endian; the CRCs are
 * CRC-32C (Castagnoli), masked as {@code rotr(crc, 15) + 0xa282ead8} so that a CRC of data that
 * itself holds CRCs does not degenerate.
 *
 * <pre>
 *  0               8              12                12+len        16+len
 *  +---------------+---------------+--------------------+-------------+
 *  | u64 length    | u32 masked    | data (length bytes)| u32 masked  |
 *  |               | crc32c(bytes  |                    | crc32c(data)|
 *  |               |  0..7)        |                    |             |
 *  +---------------+---------------+--------------------+-------------+
 * </pre>
 *
 * <p>Version: the layout has no version field; TensorFlow has never changed it, so this class
 * is layout version 1 ({@link #VERSION}) and any change would be a new format extension.
 *
 * <p>Thread-safety: stateless.
 */
final class TfRecordFrame {
    /** Layout version this class implements (the format itself carries none). */
    static final int VERSION = 1;
    /** Bytes before the data: length and its masked CRC. */
    static final int HEADER = 12;
    /** Bytes after the data: its masked CRC. */
    static final int FOOTER = 4;
    private static final int MASK_DELTA = 0xa282ead8;

    private TfRecordFrame() {
    }

    static int mask(int crc) {
        return Integer.rotateRight(crc, 15) + MASK_DELTA;
    }

    static int maskedCrc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return mask((int) c.getValue());
    }

    static void putLongLE(byte[] b, int off, long v) {
        for (int i = 0; i < 8; i++) {
            b[off + i] = (byte) (v >>> (8 * i));
        }
    }

    static void putIntLE(byte[] b, int off, int v) {
        for (int i = 0; i < 4; i++) {
            b[off + i] = (byte) (v >>> (8 * i));
        }
    }

    static long getLongLE(byte[] b, int off) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[off + i] & 0xffL);
        }
        return v;
    }

    static int getIntLE(byte[] b, int off) {
        int v = 0;
        for (int i = 3; i >= 0; i--) {
            v = (v << 8) | (b[off + i] & 0xff);
        }
        return v;
    }
}
