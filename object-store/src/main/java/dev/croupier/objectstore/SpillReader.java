package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads spilled objects back: into store memory (restore) or straight to a channel (streaming
 * to another node without a detour through memory).
 *
 * <p>Design note: raw payloads are read with one positional read into the destination memory
 * (no staging), or sent with {@code FileChannel.transferTo}, which lets the kernel move the
 * bytes (sendfile) when the target is a socket or file. A page-aligned payload of an
 * {@code O_DIRECT} file (see {@link SpillFrame}) is read bypassing the page cache with one
 * scattering read: the page holding the frame header and the payload's partial last page into
 * per-thread scratch pages, its whole pages straight into the destination. The frame header is
 * checked (before the payload is read, or right after a direct read) so a wrong offset or a
 * damaged file is reported with its file and offset instead of returning wrong bytes. LZ4
 * payloads go chunk by chunk through {@link SpillCodec}'s staging buffers.
 *
 * <p>Thread-safety: stateless; safe from any thread while the record's file is kept alive (the
 * caller holds a pin on the object). Every read opens its own channel
 * ({@link SpillFile#openForReading}), so an interrupted reader cannot close the file for others.
 */
final class SpillReader {

    private static final int MAX_BUFFER = 1 << 30;

    private SpillReader() {
    }

    /**
     * Reads a spilled object into {@code destination}.
     *
     * @param id the object, checked against the frame
     * @param record where it is
     * @param destination exactly the object's size
     * @throws IOException on a read failure or a frame that does not match
     */
    static void readInto(ObjectId id, SpillRecord record, MemorySegment destination) throws IOException {
        long size = destination.byteSize();
        if (readsDirect(record, destination)) {
            try {
                readDirect(id, record, destination);
                return;
            } catch (IOException e) {
                // fall through to the page cache, which reports a real fault again, with its cause
            }
        }
        try (FileChannel reader = record.file().openForReading()) {
            checkHeader(reader, id, record, size);
            if (record.compression() == Compression.NONE) {
                for (long o = 0; o < size; o += MAX_BUFFER) {
                    ByteBuffer view = destination.asSlice(o, Math.min(MAX_BUFFER, size - o)).asByteBuffer();
                    record.file().readFully(reader, view, record.payloadOffset() + o);
                }
                return;
            }
            SpillCodec codec = SpillCodec.forThread();
            long position = record.payloadOffset();
            long written = 0;
            while (written < size) {
                int n = readChunk(reader, codec, record, position, size - written);
                MemorySegment.copy(MemorySegment.ofBuffer(codec.raw), ValueLayout.JAVA_BYTE, 0, destination,
                        ValueLayout.JAVA_BYTE, written, n);
                position += SpillFrame.LZ4_CHUNK_HEADER_BYTES + codec.stored.getInt(4);
                written += n;
            }
        }
    }

    /**
     * Reads adjacent raw frames of one spill file with one scattering read: frame headers into a
     * small buffer, payloads straight into their destinations, padding into a scratch buffer.
     * Every header is checked after the read.
     *
     * @param ids the objects, in file order
     * @param records their frames, adjacent, in the same file, raw
     * @param destinations one per object, exactly its size
     * @throws IOException on a read failure or a frame that does not match
     */
    static void readRun(List<ObjectId> ids, List<SpillRecord> records, List<MemorySegment> destinations)
            throws IOException {
        for (int i = 0; i < records.size(); i++) {
            if (readsDirect(records.get(i), destinations.get(i))) {
                // a run with a large payload: one direct read per frame beats one buffered read
                for (int j = 0; j < records.size(); j++) {
                    readInto(ids.get(j), records.get(j), destinations.get(j));
                }
                return;
            }
        }
        SpillFile file = records.getFirst().file();
        long first = records.getFirst().frameOffset();
        ByteBuffer headers = ByteBuffer.allocateDirect(records.size() * SpillFrame.FRAME_HEADER_BYTES);
        ByteBuffer padding = ByteBuffer.allocateDirect(SpillFrame.ALIGNMENT);
        List<ByteBuffer> buffers = new ArrayList<>(records.size() * 3);
        long end = first;
        for (int i = 0; i < records.size(); i++) {
            SpillRecord record = records.get(i);
            long size = destinations.get(i).byteSize();
            if (record.frameOffset() != end || record.file() != file || record.compression() != Compression.NONE) {
                throw new IllegalArgumentException("frames of a restore run must be adjacent raw frames of one file");
            }
            buffers.add(headers.slice(i * SpillFrame.FRAME_HEADER_BYTES, SpillFrame.FRAME_HEADER_BYTES));
            for (long o = 0; o < size; o += MAX_BUFFER) {
                buffers.add(destinations.get(i).asSlice(o, Math.min(MAX_BUFFER, size - o)).asByteBuffer());
            }
            int pad = (int) (SpillFrame.frameBytes(size) - SpillFrame.FRAME_HEADER_BYTES - size);
            if (pad > 0) {
                buffers.add(padding.duplicate().limit(pad));
            }
            end += SpillFrame.frameBytes(size);
        }
        ByteBuffer[] array = buffers.toArray(ByteBuffer[]::new);
        // a channel of our own: a scattering read uses the channel position, which must not be
        // shared with other readers of the same file
        try (FileChannel channel = file.openForReading()) {
            channel.position(first);
            long remaining = end - first;
            int from = 0;
            while (remaining > 0) {
                long n = channel.read(array, from, array.length - from);
                if (n < 0) {
                    throw new IOException("spill file " + file + " ends before offset " + end);
                }
                remaining -= n;
                while (from < array.length && !array[from].hasRemaining()) {
                    from++;
                }
            }
        }
        for (int i = 0; i < records.size(); i++) {
            try {
                SpillFrame.checkFrameHeader(headers.slice(i * SpillFrame.FRAME_HEADER_BYTES,
                        SpillFrame.FRAME_HEADER_BYTES), file.toString(), records.get(i).frameOffset(), ids.get(i),
                        destinations.get(i).byteSize());
            } catch (ObjectStoreException e) {
                throw new IOException(e.getMessage(), e);
            }
        }
    }

    /** Whether {@code record} can be read into {@code destination} bypassing the page cache. */
    private static boolean readsDirect(SpillRecord record, MemorySegment destination) {
        return record.file().direct && record.compression() == Compression.NONE
                && record.payloadOffset() % SpillFrame.PAGE == 0 && destination.address() % SpillFrame.PAGE == 0;
    }

    /** Two scratch pages per thread: the frame header's page and a payload's partial last page. */
    private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> SpillFrame.pages(2));

    private static void readDirect(ObjectId id, SpillRecord record, MemorySegment destination) throws IOException {
        long size = destination.byteSize();
        long body = size & -SpillFrame.PAGE;
        ByteBuffer scratch = SCRATCH.get();
        List<ByteBuffer> buffers = new ArrayList<>(3);
        buffers.add(scratch.slice(0, SpillFrame.PAGE));
        for (long o = 0; o < body; o += MAX_BUFFER) {
            buffers.add(destination.asSlice(o, Math.min(MAX_BUFFER, body - o)).asByteBuffer());
        }
        if (body < size) {
            buffers.add(scratch.slice(SpillFrame.PAGE, SpillFrame.PAGE));
        }
        ByteBuffer[] array = buffers.toArray(ByteBuffer[]::new);
        long first = record.payloadOffset() - SpillFrame.PAGE;
        long end = record.payloadOffset() + ((size + SpillFrame.PAGE - 1) & -SpillFrame.PAGE);
        try (FileChannel channel = record.file().openForDirectReading()) {
            channel.position(first);
            long remaining = end - first;
            int from = 0;
            while (remaining > 0) {
                long n = channel.read(array, from, array.length - from);
                if (n <= 0) {
                    throw new IOException("spill file " + record.file() + " ends before offset " + end);
                }
                remaining -= n;
                while (from < array.length && !array[from].hasRemaining()) {
                    from++;
                }
            }
        }
        try {
            SpillFrame.checkFrameHeader(scratch.slice(SpillFrame.PAGE - SpillFrame.FRAME_HEADER_BYTES,
                    SpillFrame.FRAME_HEADER_BYTES), record.file().toString(), record.frameOffset(), id, size);
        } catch (ObjectStoreException e) {
            throw new IOException(e.getMessage(), e);
        }
        MemorySegment.copy(MemorySegment.ofBuffer(scratch), SpillFrame.PAGE, destination, body, size - body);
    }

    /**
     * Streams a spilled object's bytes to {@code target}.
     *
     * @param id the object, checked against the frame
     * @param record where it is
     * @param size the object's size
     * @param target where to send the bytes
     * @throws IOException on a read or write failure
     */
    static void transferTo(ObjectId id, SpillRecord record, long size, WritableByteChannel target) throws IOException {
        try (FileChannel reader = record.file().openForReading()) {
            checkHeader(reader, id, record, size);
            if (record.compression() == Compression.NONE) {
                long done = 0;
                while (done < size) {
                    long n = reader.transferTo(record.payloadOffset() + done, size - done, target);
                    if (n <= 0 && target.isOpen() && reader.size() < record.payloadOffset() + size) {
                        throw new IOException("spill file " + record.file() + " is shorter than the frame at "
                                + record.frameOffset());
                    }
                    done += n;
                }
                return;
            }
            SpillCodec codec = SpillCodec.forThread();
            long position = record.payloadOffset();
            long written = 0;
            while (written < size) {
                int n = readChunk(reader, codec, record, position, size - written);
                codec.raw.position(0).limit(n);
                while (codec.raw.hasRemaining()) {
                    target.write(codec.raw);
                }
                position += SpillFrame.LZ4_CHUNK_HEADER_BYTES + codec.stored.getInt(4);
                written += n;
            }
        }
    }

    /** Reads and decompresses the chunk at {@code position} into {@code codec.raw}; returns its raw size. */
    private static int readChunk(FileChannel reader, SpillCodec codec, SpillRecord record, long position, long rawLeft)
            throws IOException {
        codec.raw.clear();
        codec.stored.clear().limit(SpillFrame.LZ4_CHUNK_HEADER_BYTES);
        record.file().readFully(reader, codec.stored, position);
        int raw = codec.stored.getInt(0);
        int stored = codec.stored.getInt(4);
        if (raw <= 0 || raw > SpillFrame.LZ4_CHUNK_BYTES || raw > rawLeft || stored <= 0
                || stored > codec.stored.capacity() - SpillFrame.LZ4_CHUNK_HEADER_BYTES) {
            throw new IOException("spill file " + record.file() + ": bad LZ4 chunk header at offset " + position
                    + " (raw " + raw + ", stored " + stored + ")");
        }
        codec.stored.limit(SpillFrame.LZ4_CHUNK_HEADER_BYTES + stored).position(SpillFrame.LZ4_CHUNK_HEADER_BYTES);
        record.file().readFully(reader, codec.stored, position + SpillFrame.LZ4_CHUNK_HEADER_BYTES);
        int n = codec.decompressor.decompress(codec.stored, SpillFrame.LZ4_CHUNK_HEADER_BYTES, stored, codec.raw, 0,
                codec.raw.capacity());
        if (n != raw) {
            throw new IOException("spill file " + record.file() + ": LZ4 chunk at offset " + position
                    + " decompressed to " + n + " bytes, header says " + raw);
        }
        return n;
    }

    private static void checkHeader(FileChannel reader, ObjectId id, SpillRecord record, long size) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(SpillFrame.FRAME_HEADER_BYTES);
        record.file().readFully(reader, header, record.frameOffset());
        try {
            SpillFrame.checkFrameHeader(header, record.file().toString(), record.frameOffset(), id, size);
        } catch (ObjectStoreException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
