package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Appends objects to fused spill files with few, large writes.
 *
 * <p>Design note: a batch of objects (chosen least recently used first by the store) is laid
 * out as consecutive {@link SpillFrame frames} and written with one gathering write per file,
 * so 100 KiB objects cost about as much disk time as 1 MiB ones: this is the Exoshuffle paper's
 * fusing of small spilled objects into large files. Every write is whole pages, so the file can
 * be {@code O_DIRECT}: the whole pages of a large (page-aligned) payload go straight from the
 * store's memory, and everything between them (file and frame headers, small objects, the
 * partial last page of a large payload, zero padding) is assembled in one page-aligned staging
 * buffer. A file is rolled once it holds {@code fileBytes}. With LZ4 each object is compressed
 * chunk by chunk through staging buffers and written with positional writes (through the page
 * cache). A failed write (disk full) truncates the file back to its last complete frame and
 * reports which objects made it; the rest stay in memory.
 *
 * <p>Thread-safety: not thread-safe; used only by the store's spill thread.
 */
final class SpillWriter {

    /** Largest single ByteBuffer over a payload (ByteBuffers are int-indexed). */
    private static final int MAX_BUFFER = 1 << 30;
    private static final ByteBuffer PADDING = ByteBuffer.allocateDirect(SpillFrame.ALIGNMENT);
    /** Staged bytes per gathering write; any one frame's staged part is far smaller. */
    private static final int STAGING_BYTES = 1 << 20;

    /**
     * One object to write.
     *
     * @param id the object
     * @param bytes its bytes in the store's memory
     */
    record Item(ObjectId id, MemorySegment bytes) {
    }

    /**
     * What a batch achieved.
     *
     * @param records records of the first {@code records.size()} items, in order; the rest were
     *     not written
     * @param failure the write failure, or null if every item was written
     * @param closedFiles files that reached their target size during this batch
     * @param newFiles files created during this batch
     */
    record Result(List<SpillRecord> records, IOException failure, List<SpillFile> closedFiles,
                  List<SpillFile> newFiles) {
    }

    private final Path dir;
    private final long fileBytes;
    private final Compression compression;
    private final boolean tryDirect;
    private int nextFileNumber = 1;
    private SpillFile current;
    private final ByteBuffer staging = SpillFrame.pages(STAGING_BYTES / SpillFrame.PAGE);
    private final MemorySegment stagingBytes = MemorySegment.ofBuffer(staging);

    SpillWriter(Path dir, long fileBytes, Compression compression) {
        this(dir, fileBytes, compression, compression == Compression.NONE);
    }

    /** With {@code tryDirect} false, files use the page cache even where {@code O_DIRECT} works (for tests). */
    SpillWriter(Path dir, long fileBytes, Compression compression, boolean tryDirect) {
        this.dir = dir;
        this.fileBytes = fileBytes;
        this.compression = compression;
        this.tryDirect = tryDirect;
    }

    /** Returns the file being appended to, or null. */
    SpillFile current() {
        return current;
    }

    /**
     * Writes the items in order.
     *
     * @param items the batch
     * @return which items were written and where
     */
    Result write(List<Item> items) {
        List<SpillRecord> records = new ArrayList<>(items.size());
        List<SpillFile> closed = new ArrayList<>();
        List<SpillFile> created = new ArrayList<>();
        int next = 0;
        try {
            while (next < items.size()) {
                if (current == null || current.end() >= fileBytes) {
                    if (current != null) {
                        closed.add(current);
                    }
                    current = null;
                    current = SpillFile.create(dir, nextFileNumber++, tryDirect);
                    created.add(current);
                }
                next = compression == Compression.NONE
                        ? writeRawGroup(items, next, records)
                        : writeCompressed(items.get(next), records, next);
            }
            return new Result(records, null, closed, created);
        } catch (IOException e) {
            if (current != null) {
                try {
                    current.truncateToEnd();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            return new Result(records, e, closed, created);
        }
    }

    /**
     * Writes items from {@code from} while they fit the current file and the staging buffer;
     * returns the next index. The write starts at the file's end, a page boundary, and ends on one.
     */
    private int writeRawGroup(List<Item> items, int from, List<SpillRecord> records) throws IOException {
        long start = current.end();
        long position = start;
        int stagedFrom = 0;
        staging.clear().order(ByteOrder.LITTLE_ENDIAN);
        List<ByteBuffer> gather = new ArrayList<>();
        List<SpillRecord> written = new ArrayList<>();
        int to = from;
        while (to < items.size() && (to == from || position < fileBytes)) {
            MemorySegment bytes = items.get(to).bytes();
            long size = bytes.byteSize();
            boolean aligned = SpillFrame.pageAligned(size) && bytes.address() % SpillFrame.PAGE == 0;
            long frame = aligned ? SpillFrame.pageAlignedFrameAt(position) : position;
            long staged = frame - position + (aligned ? SpillFrame.FRAME_HEADER_BYTES + SpillFrame.PAGE
                    : SpillFrame.frameBytes(size));
            if (staging.remaining() < staged + SpillFrame.PAGE) {
                break; // leaves room for the final padding
            }
            zeros((int) (frame - position));
            SpillFrame.writeFrameHeader(staging, items.get(to).id(), Compression.NONE, size, size);
            long payload = 0;
            if (aligned) {
                // the staged bytes end on the page where the payload starts: send them, then the
                // payload's whole pages straight from the store
                gather.add(staging.slice(stagedFrom, staging.position() - stagedFrom));
                stagedFrom = staging.position();
                payload = size & -SpillFrame.PAGE;
                for (long o = 0; o < payload; o += MAX_BUFFER) {
                    gather.add(bytes.asSlice(o, Math.min(MAX_BUFFER, payload - o)).asByteBuffer());
                }
            }
            MemorySegment.copy(bytes, payload, stagingBytes, staging.position(), size - payload);
            staging.position((int) (staging.position() + size - payload));
            // the staging head stands at file offset frame + header + size; pad to the frame's end
            position = frame + SpillFrame.frameBytes(size);
            zeros((int) (position - frame - SpillFrame.FRAME_HEADER_BYTES - size));
            written.add(new SpillRecord(current, frame, size, Compression.NONE));
            to++;
        }
        long end = (position + SpillFrame.PAGE - 1) & -SpillFrame.PAGE;
        zeros((int) (end - position));
        gather.add(staging.slice(stagedFrom, staging.position() - stagedFrom));
        ByteBuffer[] buffers = gather.toArray(ByteBuffer[]::new);
        current.channel.position(start);
        long remaining = end - start;
        int first = 0;
        while (remaining > 0) {
            long n = current.channel.write(buffers, first, buffers.length - first);
            remaining -= n;
            while (first < buffers.length && !buffers[first].hasRemaining()) {
                first++;
            }
        }
        current.advance(end);
        records.addAll(written);
        return to;
    }

    /** Stages {@code count} zero bytes. */
    private void zeros(int count) {
        stagingBytes.asSlice(staging.position(), count).fill((byte) 0);
        staging.position(staging.position() + count);
    }

    /** Writes one object LZ4-compressed at the end of the current file. */
    private int writeCompressed(Item item, List<SpillRecord> records, int index) throws IOException {
        SpillCodec codec = SpillCodec.forThread();
        long frame = current.end();
        long position = frame + SpillFrame.FRAME_HEADER_BYTES;
        MemorySegment src = item.bytes();
        long size = src.byteSize();
        for (long o = 0; o < size; o += SpillFrame.LZ4_CHUNK_BYTES) {
            int n = (int) Math.min(SpillFrame.LZ4_CHUNK_BYTES, size - o);
            codec.raw.clear();
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, o, MemorySegment.ofBuffer(codec.raw), ValueLayout.JAVA_BYTE,
                    0, n);
            int compressed = codec.compressor.compress(codec.raw, 0, n, codec.stored,
                    SpillFrame.LZ4_CHUNK_HEADER_BYTES, codec.stored.capacity() - SpillFrame.LZ4_CHUNK_HEADER_BYTES);
            codec.stored.clear();
            codec.stored.putInt(0, n).putInt(4, compressed).limit(SpillFrame.LZ4_CHUNK_HEADER_BYTES + compressed);
            position += writeFully(codec.stored, position);
        }
        long stored = position - frame - SpillFrame.FRAME_HEADER_BYTES;
        ByteBuffer header = ByteBuffer.allocate(SpillFrame.FRAME_HEADER_BYTES);
        SpillFrame.writeFrameHeader(header, item.id(), Compression.LZ4, size, stored);
        writeFully(header.flip(), frame);
        long end = frame + SpillFrame.frameBytes(stored);
        if (end > position) {
            writeFully(PADDING.duplicate().limit((int) (end - position)), position);
        }
        current.advance(end);
        records.add(new SpillRecord(current, frame, stored, Compression.LZ4));
        return index + 1;
    }

    private int writeFully(ByteBuffer buffer, long position) throws IOException {
        int total = buffer.remaining();
        long p = position;
        while (buffer.hasRemaining()) {
            p += current.channel.write(buffer, p);
        }
        return total;
    }

    /** Returns the spill directory, for error messages. */
    Path dir() {
        return dir;
    }
}
