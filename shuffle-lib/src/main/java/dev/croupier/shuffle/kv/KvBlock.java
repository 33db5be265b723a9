package dev.croupier.shuffle.kv;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.TaskOutput;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A block of variable-size key/value records: one contiguous run of memory, read in place.
 *
 * <pre>
 *  0       2       3       4               8
 *  +-------+-------+-------+---------------+
 *  | magic |version| (zero)| entries (LE)  |   header, 8 bytes
 *  | 0xC5B1|   1   |       |    int32      |
 *  +-------+-------+-------+---------------+
 *  then, per entry, unaligned:
 *  +-------------------+-------------------+-------------+---------------+
 *  | key length (LE)   | value length (LE) | key bytes   | value bytes   |
 *  |      int32        |      int32        | (key length)| (value length)|
 *  +-------------------+-------------------+-------------+---------------+
 * </pre>
 *
 * Blocks are made with {@link Builder} (which sizes its output first, so a block is written once,
 * into {@link TaskOutput} memory) and read with a {@link Cursor} (one object per block, none per
 * entry). Stateless; thread-safe.
 */
public final class KvBlock {

    /** First two bytes of every block. */
    public static final short MAGIC = (short) 0xC5B1;
    /** Layout version written by this class. */
    public static final byte VERSION = 1;
    static final int HEADER_BYTES = 8;
    static final int ENTRY_HEADER_BYTES = 8;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;

    private KvBlock() {}

    /** Bytes one entry takes. */
    public static long entryBytes(int keyLength, int valueLength) {
        return ENTRY_HEADER_BYTES + (long) keyLength + valueLength;
    }

    /** Number of entries of {@code block}, after checking its header. */
    public static int entries(MemorySegment block) {
        if (block.byteSize() < HEADER_BYTES || block.get(SHORT, 0) != MAGIC || block.get(ValueLayout.JAVA_BYTE, 2) != VERSION) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "not a key/value block of version " + VERSION
                    + " (" + block.byteSize() + " bytes; byte offset 0)");
        }
        return block.get(INT, 4);
    }

    /** Writes entries into one block of a size known in advance. Not thread-safe. */
    public static final class Builder {
        private final MemorySegment out;
        private final int entries;
        private long at = HEADER_BYTES;
        private int written;

        /** A block for {@code entries} entries whose {@link #entryBytes} sum to {@code entryBytes}. */
        public Builder(int entries, long entryBytes) {
            this(TaskOutput.allocate(HEADER_BYTES + entryBytes), entries);
        }

        /**
         * A block for {@code entries} entries written into {@code out} (a part of a pack), which
         * must be {@link #HEADER_BYTES} plus the entries' {@link #entryBytes}.
         */
        Builder(MemorySegment out, int entries) {
            this.out = out;
            this.entries = entries;
            out.set(SHORT, 0, MAGIC);
            out.set(ValueLayout.JAVA_BYTE, 2, VERSION);
            out.set(ValueLayout.JAVA_BYTE, 3, (byte) 0);
            out.set(INT, 4, entries);
        }

        /** Appends a key from {@code keys} and a value from {@code values}. */
        public Builder add(MemorySegment keys, long keyOffset, int keyLength,
                           MemorySegment values, long valueOffset, int valueLength) {
            out.set(INT, at, keyLength);
            out.set(INT, at + 4, valueLength);
            MemorySegment.copy(keys, keyOffset, out, at + ENTRY_HEADER_BYTES, keyLength);
            MemorySegment.copy(values, valueOffset, out, at + ENTRY_HEADER_BYTES + keyLength, valueLength);
            at += entryBytes(keyLength, valueLength);
            written++;
            return this;
        }

        /** The finished block; fails if fewer entries or bytes were added than announced. */
        public MemorySegment build() {
            if (written != entries || at != out.byteSize()) {
                throw new IllegalStateException("announced " + entries + " entries in " + out.byteSize()
                        + " bytes, wrote " + written + " in " + at);
            }
            return out;
        }
    }

    /**
     * Walks the entries of a block: {@code while (c.next()) use(c.keyOffset(), c.keyLength(), ...)}.
     * Offsets are into {@link #block()}. Checks every length against the block's end, so a
     * corrupt block fails with the entry's byte offset instead of reading past it. Not thread-safe.
     */
    public static final class Cursor {
        private final MemorySegment block;
        private final int entries;
        private int index = -1;
        private long at = HEADER_BYTES;
        private long entry;
        private int keyLength;
        private int valueLength;

        public Cursor(MemorySegment block) {
            this.block = block;
            this.entries = entries(block);
        }

        public boolean next() {
            if (index >= 0) {
                at += entryBytes(keyLength, valueLength);
            }
            if (++index >= entries) {
                return false;
            }
            entry = at;
            if (at + ENTRY_HEADER_BYTES > block.byteSize()) {
                throw corrupt("its header");
            }
            keyLength = block.get(INT, at);
            valueLength = block.get(INT, at + 4);
            if (keyLength < 0 || valueLength < 0 || at + entryBytes(keyLength, valueLength) > block.byteSize()) {
                throw corrupt("lengths " + keyLength + " and " + valueLength);
            }
            return true;
        }

        private CroupierException corrupt(String what) {
            return new CroupierException(ErrorCode.BAD_INPUT, "key/value block of " + block.byteSize()
                    + " bytes: entry " + index + " at byte offset " + at + " has " + what + " past the end");
        }

        public MemorySegment block() {
            return block;
        }

        public long entryOffset() {
            return entry;
        }

        public long keyOffset() {
            return entry + ENTRY_HEADER_BYTES;
        }

        public int keyLength() {
            return keyLength;
        }

        public long valueOffset() {
            return entry + ENTRY_HEADER_BYTES + keyLength;
        }

        public int valueLength() {
            return valueLength;
        }
    }
}
