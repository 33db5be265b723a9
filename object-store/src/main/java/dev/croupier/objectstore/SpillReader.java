package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads spilled objects back: into store memory (restore), or a range at a time into a
 * reader's window ({@link ObjectReader}, to send an object to another node without restoring it).
 *
 * <p>Design note: raw payloads are read with one positional read into the destination memory
 * (no staging). An {@code O_DIRECT} file (see
 * {@link SpillFrame}) is read bypassing the page cache with one scattering read per run of
 * frames: the whole pages of page-aligned payloads straight into their destinations, all other
 * pages into per-thread scratch pages. The frame header is
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
        if (record.file().direct && record.compression() == Compression.NONE) {
            try {
                readRunDirect(List.of(id), List.of(record), List.of(destination));
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
     * Reads raw frames of one spill file that follow each other (with at most
     * {@link #MAX_RUN_GAP} bytes of padding between them) with one scattering read: payloads
     * straight into their destinations, frame headers and padding into scratch memory. On an
     * {@code O_DIRECT} file the read bypasses the page cache ({@link #readRunDirect}). Every
     * header is checked after the read.
     *
     * @param ids the objects, in file order
     * @param records their frames, in file order, in the same file, raw
     * @param destinations one per object, exactly its size
     * @throws IOException on a read failure or a frame that does not match
     */
    static void readRun(List<ObjectId> ids, List<SpillRecord> records, List<MemorySegment> destinations)
            throws IOException {
        SpillFile file = records.getFirst().file();
        long first = records.getFirst().frameOffset();
        long end = first;
        for (SpillRecord record : records) {
            long gap = record.frameOffset() - end;
            if (gap < 0 || gap > MAX_RUN_GAP || record.file() != file || record.compression() != Compression.NONE) {
                throw new IllegalArgumentException("frames of a restore run must be raw frames of one file, in order, "
                        + "at most " + MAX_RUN_GAP + " bytes apart");
            }
            end = record.frameEnd();
        }
        if (file.direct) {
            try {
                readRunDirect(ids, records, destinations);
                return;
            } catch (IOException e) {
                // fall through to the page cache, which reports a real fault again, with its cause
            }
        }
        ByteBuffer headers = ByteBuffer.allocateDirect(records.size() * SpillFrame.FRAME_HEADER_BYTES);
        ByteBuffer padding = ByteBuffer.allocateDirect(MAX_RUN_GAP + SpillFrame.ALIGNMENT);
        List<ByteBuffer> buffers = new ArrayList<>(records.size() * 4);
        long at = first;
        for (int i = 0; i < records.size(); i++) {
            SpillRecord record = records.get(i);
            long size = destinations.get(i).byteSize();
            if (record.frameOffset() > at) {
                buffers.add(padding.duplicate().limit((int) (record.frameOffset() - at)));
            }
            buffers.add(headers.slice(i * SpillFrame.FRAME_HEADER_BYTES, SpillFrame.FRAME_HEADER_BYTES));
            for (long o = 0; o < size; o += MAX_BUFFER) {
                buffers.add(destinations.get(i).asSlice(o, Math.min(MAX_BUFFER, size - o)).asByteBuffer());
            }
            int pad = (int) (SpillFrame.frameBytes(size) - SpillFrame.FRAME_HEADER_BYTES - size);
            if (pad > 0) {
                buffers.add(padding.duplicate().limit(pad));
            }
            at = record.frameOffset() + SpillFrame.frameBytes(size);
        }
        ByteBuffer[] array = buffers.toArray(ByteBuffer[]::new);
        // a channel of our own: a scattering read uses the channel position, which must not be
        // shared with other readers of the same file
        try (FileChannel channel = file.openForReading()) {
            scatterRead(channel, array, first, end, file);
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

    /** Largest padding between two frames of one restore run: a page-aligned frame's gap plus a batch's end. */
    static final int MAX_RUN_GAP = 2 * SpillFrame.PAGE;

    /** Scratch a thread keeps between direct reads; runs of small objects that need more get their own. */
    private static final int KEPT_SCRATCH_BYTES = 1 << 20;
    /** Each thread's scratch pages for direct reads, grown on demand up to {@link #KEPT_SCRATCH_BYTES}. */
    private static final ThreadLocal<ByteBuffer[]> SCRATCH = ThreadLocal.withInitial(() -> new ByteBuffer[1]);

    private static ByteBuffer scratch(long bytes) {
        int pages = (int) Math.max(2, (bytes + SpillFrame.PAGE - 1) / SpillFrame.PAGE);
        if (bytes > KEPT_SCRATCH_BYTES) {
            return SpillFrame.pages(pages);
        }
        ByteBuffer[] held = SCRATCH.get();
        if (held[0] == null || held[0].capacity() < bytes) {
            held[0] = SpillFrame.pages(Math.max(pages, 2 * (held[0] == null ? 0 : held[0].capacity() / SpillFrame.PAGE)));
        }
        return held[0];
    }

    /**
     * The direct read of a run: the file's pages from the first frame's page to the last frame's
     * end, with one scattering read. The whole pages of each page-aligned payload go straight to
     * its (page-aligned) destination; every other page (headers, padding, small frames, partial
     * last pages) goes to scratch pages, from which headers are checked and the rest copied.
     */
    private static void readRunDirect(List<ObjectId> ids, List<SpillRecord> records, List<MemorySegment> destinations)
            throws IOException {
        int page = SpillFrame.PAGE;
        int n = records.size();
        long from = records.getFirst().frameOffset() & -page;
        long to = (records.getLast().frameEnd() + page - 1) & -page;
        long[] body = new long[n];
        long scratchBytes = 0;
        long pos = from;
        for (int i = 0; i < n; i++) {
            MemorySegment dest = destinations.get(i);
            long payload = records.get(i).payloadOffset();
            if (payload % page == 0 && dest.address() % page == 0 && payload >= pos) {
                body[i] = dest.byteSize() & -page;
            }
            if (body[i] > 0) {
                scratchBytes += payload - pos;
                pos = payload + body[i];
            }
        }
        scratchBytes += to - pos;
        ByteBuffer scratch = scratch(scratchBytes);
        MemorySegment scratchBytesView = MemorySegment.ofBuffer(scratch);
        // file offset where each scratch region starts, and where it lies in scratch
        long[] regionFile = new long[n + 1];
        long[] regionScratch = new long[n + 1];
        int regions = 0;
        List<ByteBuffer> buffers = new ArrayList<>(2 * n + 1);
        long used = 0;
        pos = from;
        for (int i = 0; i <= n; i++) {
            long next = i < n ? (body[i] > 0 ? records.get(i).payloadOffset() : -1) : to;
            if (next < 0) {
                continue;
            }
            if (next > pos) {
                regionFile[regions] = pos;
                regionScratch[regions++] = used;
                buffers.add(scratch.slice((int) used, (int) (next - pos)));
                used += next - pos;
            }
            if (i < n) {
                for (long o = 0; o < body[i]; o += MAX_BUFFER) {
                    buffers.add(destinations.get(i).asSlice(o, Math.min(MAX_BUFFER, body[i] - o)).asByteBuffer());
                }
                pos = next + body[i];
            }
        }
        ByteBuffer[] array = buffers.toArray(ByteBuffer[]::new);
        SpillFile file = records.getFirst().file();
        try (FileChannel channel = file.openForDirectReading()) {
            scatterRead(channel, array, from, to, file);
        }
        for (int i = 0; i < n; i++) {
            SpillRecord record = records.get(i);
            MemorySegment dest = destinations.get(i);
            long header = inScratch(record.frameOffset(), regionFile, regionScratch, regions);
            try {
                SpillFrame.checkFrameHeader(scratch.slice((int) header, SpillFrame.FRAME_HEADER_BYTES),
                        file.toString(), record.frameOffset(), ids.get(i), dest.byteSize());
            } catch (ObjectStoreException e) {
                throw new IOException(e.getMessage(), e);
            }
            long rest = dest.byteSize() - body[i];
            if (rest > 0) {
                long at = inScratch(record.payloadOffset() + body[i], regionFile, regionScratch, regions);
                MemorySegment.copy(scratchBytesView, at, dest, body[i], rest);
            }
        }
    }

    /** Fills {@code buffers}, in order, from bytes {@code [from, to)} of {@code file} through {@code channel}. */
    private static void scatterRead(FileChannel channel, ByteBuffer[] buffers, long from, long to, SpillFile file)
            throws IOException {
        channel.position(from);
        long remaining = to - from;
        int at = 0;
        while (remaining > 0) {
            long n = channel.read(buffers, at, buffers.length - at);
            if (n <= 0) {
                throw new IOException("spill file " + file + " ends before offset " + to);
            }
            remaining -= n;
            while (at < buffers.length && !buffers[at].hasRemaining()) {
                at++;
            }
        }
    }

    /** Where file offset {@code fileOffset}, which lies in a scratch region, is in scratch. */
    private static long inScratch(long fileOffset, long[] regionFile, long[] regionScratch, int regions) {
        int r = regions - 1;
        while (regionFile[r] > fileOffset) {
            r--;
        }
        return regionScratch[r] + fileOffset - regionFile[r];
    }

    /**
     * Reads bytes {@code [offset, offset + length)} of a raw spilled object into {@code window}
     * and returns a view of them there. On an {@code O_DIRECT} file the read covers the whole
     * pages around the range, so the view starts inside the window at the range's page offset;
     * if the direct read fails the page cache is used.
     *
     * @param window page-aligned, at least {@code length} plus two pages
     * @param checkHeader whether to check the frame's header first (once per reader is enough)
     */
    static MemorySegment readRange(ObjectId id, SpillRecord record, long size, long offset, int length,
            ByteBuffer window, boolean checkHeader) throws IOException {
        SpillFile file = record.file();
        long start = record.payloadOffset() + offset;
        if (checkHeader) {
            try (FileChannel reader = file.openForReading()) {
                checkHeader(reader, id, record, size);
            }
        }
        if (file.direct) {
            long from = start & -SpillFrame.PAGE;
            long to = (start + length + SpillFrame.PAGE - 1) & -SpillFrame.PAGE;
            try (FileChannel direct = file.openForDirectReading()) {
                ByteBuffer pages = window.clear().limit((int) (to - from));
                // the last pages of the file may end before a whole page: a short read there is fine
                long at = from;
                while (pages.hasRemaining() && at < start + length) {
                    int n = direct.read(pages, at);
                    if (n <= 0) {
                        break;
                    }
                    at += n;
                }
                if (at >= start + length) {
                    return MemorySegment.ofBuffer(window.clear()).asSlice(start - from, length);
                }
            } catch (IOException e) {
                // the page cache below reports a real fault again, with its cause
            }
        }
        try (FileChannel reader = file.openForReading()) {
            file.readFully(reader, window.clear().limit(length), start);
        }
        return MemorySegment.ofBuffer(window.clear()).asSlice(0, length);
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
