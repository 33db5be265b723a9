package dev.croupier.futures.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The frame of every value the runtime stores: an 8-byte header, then the payload.
 *
 * <pre>
 *  0        1        2        3        4                  8
 *  +--------+--------+--------+--------+------------------+---------------------
 *  | magic  | version|  tag   | (zero) | codec id (int LE)| payload ...
 *  | 0xC5   |   1    |        |        | CUSTOM only      | 8-byte aligned
 *  +--------+--------+--------+--------+------------------+---------------------
 * </pre>
 *
 * The payload starts 8 bytes in so that a {@code MemorySegment} or {@code byte[]} value is
 * stored and read back as one copy (or none, as a view), aligned as its writer left it.
 * Tags are the constants below; they never change meaning within a version.
 */
final class ValueFrame {
    static final int HEADER_BYTES = 8;
    static final byte MAGIC = (byte) 0xC5;
    static final byte VERSION = 1;

    static final byte NULL = 0;
    static final byte BYTES = 1;
    static final byte BYTE_BUFFER = 2;
    static final byte SEGMENT = 3;
    static final byte BOOLEAN = 4;
    static final byte BYTE = 5;
    static final byte SHORT = 6;
    static final byte CHAR = 7;
    static final byte INT = 8;
    static final byte LONG = 9;
    static final byte FLOAT = 10;
    static final byte DOUBLE = 11;
    static final byte STRING = 12;
    static final byte CUSTOM = 13;
    static final byte JAVA_SERIALIZED = 14;

    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED;

    private ValueFrame() {}

    static void writeHeader(MemorySegment frame, byte tag, int codecId) {
        frame.set(ValueLayout.JAVA_BYTE, 0, MAGIC);
        frame.set(ValueLayout.JAVA_BYTE, 1, VERSION);
        frame.set(ValueLayout.JAVA_BYTE, 2, tag);
        frame.set(ValueLayout.JAVA_BYTE, 3, (byte) 0);
        frame.set(INT_LE, 4, codecId);
    }

    /** The tag of a frame, after checking its magic and version. */
    static byte tag(MemorySegment frame) {
        if (frame.byteSize() < HEADER_BYTES
                || frame.get(ValueLayout.JAVA_BYTE, 0) != MAGIC
                || frame.get(ValueLayout.JAVA_BYTE, 1) != VERSION) {
            throw new IllegalStateException("not a value frame of version " + VERSION
                    + " (" + frame.byteSize() + " bytes)");
        }
        return frame.get(ValueLayout.JAVA_BYTE, 2);
    }

    static int codecId(MemorySegment frame) {
        return frame.get(INT_LE, 4);
    }

    static MemorySegment payload(MemorySegment frame) {
        return frame.asSlice(HEADER_BYTES);
    }
}
