package dev.croupier.objectstore;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Byte layout of a fused spill file: a file header, then one frame per spilled object, each a
 * frame header followed by the object's stored payload, padded to {@link #ALIGNMENT}. The file
 * is written in whole {@link #PAGE pages} (so it can be written with {@code O_DIRECT}): a raw
 * frame whose payload is at least {@link FreeListAllocator#PAGE_ALIGNED_MIN} bytes starts
 * {@code FRAME_HEADER_BYTES} before a page boundary, so its payload is page-aligned and moves
 * between the store's (page-aligned) block and the disk without a copy; zero padding fills the
 * gap before such a frame and the end of every write.
 *
 * <pre>
 * file header (64 bytes at offset 0, written as a whole page: the first frame is at PAGE)
 *  0         4        6        8          12                20                        64
 *  +---------+--------+--------+----------+-----------------+-------------------------+
 *  | "CRSF"  | ver=2  | hdr=64 | file no. | created (ms)    | reserved, zero          |
 *  +---------+--------+--------+----------+-----------------+-------------------------+
 *   magic u32, version u16, header length u16, file number u32, creation time u64
 *
 * frame (at a multiple of 64; a page-aligned frame at PAGE - 64 modulo PAGE)
 *  0         4        6     7      8                24           32              40          64
 *  +---------+--------+-----+------+----------------+------------+---------------+-----------+
 *  | "CROB"  | ver=2  |codec| rsvd | object id (16) | raw length | stored length | reserved  |
 *  +---------+--------+-----+------+----------------+------------+---------------+-----------+
 *  | payload: stored length bytes | zero padding to a multiple of 64                        |
 *  +------------------------------+---------------------------------------------------------+
 *   magic u32, version u16, codec u8, reserved u8, id high u64, id low u64, raw length u64,
 *   stored length u64, reserved 24 bytes
 *
 * LZ4 payload (codec 1): chunks, each
 *  +-------------------+-------------------+----------------------+
 *  | raw len (u32)     | stored len (u32)  | LZ4 block (stored)   |
 *  +-------------------+-------------------+----------------------+
 * </pre>
 *
 * All integers little-endian. Codec 0 is raw bytes ({@link Compression#NONE}), 1 is LZ4 fast
 * blocks of at most {@link #LZ4_CHUNK_BYTES} raw bytes. A raw payload is the object's bytes
 * exactly, so another process can map (file, payload offset, raw length) read-only. The file is
 * never rewritten in place; a failed append is cut off by truncation, so a file only ever holds
 * complete frames.
 *
 * <p>Thread-safety: stateless; safe from any thread.
 */
final class SpillFrame {

    /** Format version written in the file header and every frame. */
    static final short VERSION = 2;
    /** File header size. */
    static final int FILE_HEADER_BYTES = 64;
    /** Frame header size; the payload follows at once. */
    static final int FRAME_HEADER_BYTES = 64;
    /** Frames start at multiples of this. */
    static final int ALIGNMENT = 64;
    /** Unit of every write and alignment of large payloads: what {@code O_DIRECT} needs. */
    static final int PAGE = (int) FreeListAllocator.PAGE;
    /** Raw bytes per LZ4 chunk. */
    static final int LZ4_CHUNK_BYTES = 1 << 20;
    /** Size of an LZ4 chunk header. */
    static final int LZ4_CHUNK_HEADER_BYTES = 8;

    static final int FILE_MAGIC = 0x46535243; // "CRSF" little-endian
    static final int FRAME_MAGIC = 0x424F5243; // "CROB" little-endian

    private SpillFrame() {
    }

    /** Bytes from a frame's start to the next frame's start. */
    static long frameBytes(long storedLength) {
        long end = FRAME_HEADER_BYTES + storedLength;
        return (end + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /**
     * Whether a raw payload of {@code rawLength} bytes gets a page-aligned frame: the store
     * gives such objects page-aligned memory, so the payload moves by {@code O_DIRECT}.
     */
    static boolean pageAligned(long rawLength) {
        return rawLength >= FreeListAllocator.PAGE_ALIGNED_MIN;
    }

    /** Where a page-aligned frame starts, the first such place at or after {@code position}. */
    static long pageAlignedFrameAt(long position) {
        long payload = (position + FRAME_HEADER_BYTES + PAGE - 1) & -PAGE;
        return payload - FRAME_HEADER_BYTES;
    }

    /** A zeroed, page-aligned direct buffer of {@code count} pages, as {@code O_DIRECT} I/O needs. */
    static ByteBuffer pages(int count) {
        return ByteBuffer.allocateDirect((count + 1) * PAGE).alignedSlice(PAGE).slice(0, count * PAGE);
    }

    static byte codecOf(Compression compression) {
        return (byte) compression.ordinal();
    }

    static Compression compressionOf(byte codec) {
        Compression[] all = Compression.values();
        if (codec < 0 || codec >= all.length) {
            throw new IllegalArgumentException("unknown spill codec " + codec);
        }
        return all[codec];
    }

    /** Writes the file header into {@code out} (position advanced by 64). */
    static void writeFileHeader(ByteBuffer out, int fileNumber, long createdMillis) {
        ByteBuffer b = out.order(ByteOrder.LITTLE_ENDIAN);
        int start = b.position();
        b.putInt(FILE_MAGIC).putShort(VERSION).putShort((short) FILE_HEADER_BYTES).putInt(fileNumber)
                .putLong(createdMillis);
        while (b.position() < start + FILE_HEADER_BYTES) {
            b.put((byte) 0);
        }
    }

    /** Writes a frame header into {@code out} (position advanced by {@code FRAME_HEADER_BYTES}). */
    static void writeFrameHeader(ByteBuffer out, ObjectId id, Compression compression, long rawLength,
                                 long storedLength) {
        out.order(ByteOrder.LITTLE_ENDIAN)
                .putInt(FRAME_MAGIC).putShort(VERSION).put(codecOf(compression)).put((byte) 0)
                .putLong(id.high()).putLong(id.low())
                .putLong(rawLength).putLong(storedLength).putLong(0).putLong(0).putLong(0);
    }

    /**
     * Checks a frame header read back from a spill file against what the store expects there.
     *
     * @param header {@code FRAME_HEADER_BYTES} read at {@code frameOffset}
     * @param file the file, for the message
     * @param frameOffset the frame's offset, for the message
     * @param expected the object the store put there
     * @param rawLength its size
     * @throws ObjectStoreException naming the file, offset and field if anything differs
     */
    static void checkFrameHeader(ByteBuffer header, String file, long frameOffset, ObjectId expected,
                                 long rawLength) {
        ByteBuffer b = header.order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt(0);
        short version = b.getShort(4);
        ObjectId id = new ObjectId(b.getLong(8), b.getLong(16));
        long raw = b.getLong(24);
        String where = "spill file " + file + " frame at offset " + frameOffset;
        if (magic != FRAME_MAGIC) {
            throw new ObjectStoreException(where + ": bad magic 0x" + Integer.toHexString(magic));
        }
        if (version != VERSION) {
            throw new ObjectStoreException(where + ": unsupported version " + version);
        }
        if (!id.equals(expected)) {
            throw new ObjectStoreException(where + ": holds object " + id + ", expected " + expected);
        }
        if (raw != rawLength) {
            throw new ObjectStoreException(where + ": raw length " + raw + ", expected " + rawLength);
        }
    }
}
