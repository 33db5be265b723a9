package dev.croupier.shuffle.reshard;

import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.reshard.internal.ShardExtraction;
import dev.croupier.futures.TaskOutput;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Design note: the extracted bytes of one input shard as one object-store value, dSort's
 * "extract to a work tar" for every format. The extraction task streams each file's bytes into
 * a growing heap buffer ({@link Writer}, the {@link ShardExtraction.Sink}); the finished frame
 * is returned as the task's value, so the object store holds it (and spills it past its
 * capacity) on the node that read the shard. Creation tasks receive it as a read-only segment
 * view and hand out record files as views into it, never copies. A record's files follow each
 * other in the index even when they were not adjacent in the shard. Content is limited to
 * 2 GiB per input shard (one Java array while it is being filled). The gather step of a
 * multi-node job {@link #select selects} from a frame the records one output shard needs, as
 * a smaller frame of the same layout, so only those bytes travel to the creating node.
 *
 * <pre>
 *   0       4           8                16
 *   +-------+-----------+----------------+-------------------------+
 *   | ver=1 | records n | long indexAt   | file bytes ...          |
 *   +-------+-----------+----------------+-------------------------+
 *   indexAt: long[n] entryAt (absolute offsets of the entries)
 *   entry:   int files | files x (int extLen | ext UTF-8 | long at | int size)
 *            (at = -1 in a dry run, where bytes are read and dropped)
 * </pre>
 *
 * <p>Thread-safety: a Writer is filled by one thread; a frame is immutable once written and
 * may be read by any number of threads.
 */
final class ExtractedShard {
    /** Frame version written in the first int. */
    static final int VERSION = 1;
    private static final int HEADER = 16;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ExtractedShard() {
    }

    /** Fills a frame while a shard is extracted. */
    static final class Writer implements ShardExtraction.Sink {
        private final boolean keepBytes;
        private byte[] buf;
        private int used = HEADER;
        private final List<String> ext = new ArrayList<>();
        private long[] at = new long[64];
        private int[] size = new int[64];
        private int files;
        private int[] first = new int[16];
        private int[] count = new int[16];
        private int records;

        /**
         * @param keepBytes false for a dry run
         * @param expectedBytes a guess of the content size (the shard's file size for plain tar)
         */
        Writer(boolean keepBytes, long expectedBytes) {
            this.keepBytes = keepBytes;
            this.buf = new byte[(int) Math.min(Integer.MAX_VALUE - 16, Math.max(1 << 16, keepBytes ? expectedBytes + HEADER : 0))];
        }

        @Override
        public long put(InputStream content, long length) throws IOException {
            if (!keepBytes) {
                content.skipNBytes(length);
                return -1;
            }
            int n = reserve(length);
            int k = content.readNBytes(buf, used, n);
            if (k != n) {
                throw new IOException("file stream ended after " + k + " of its " + n + " bytes");
            }
            long location = used;
            used += n;
            return location;
        }

        @Override
        public long put(ByteBuffer content) throws IOException {
            if (!keepBytes) {
                return -1;
            }
            int n = reserve(content.remaining());
            content.duplicate().get(buf, used, n);
            long location = used;
            used += n;
            return location;
        }

        private int reserve(long length) throws IOException {
            long need = (long) used + length;
            if (need > Integer.MAX_VALUE - 64) {
                throw new IOException("the shard's extracted content passes 2 GiB, the limit of one extracted shard");
            }
            if (need > buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 16, Math.max(need, 2L * buf.length)));
            }
            return (int) length;
        }

        @Override
        public long addRecord(List<String> extensions, long[] locations, int[] sizes) {
            if (records == first.length) {
                first = Arrays.copyOf(first, records * 2);
                count = Arrays.copyOf(count, records * 2);
            }
            first[records] = files;
            count[records] = extensions.size();
            for (int i = 0; i < extensions.size(); i++) {
                if (files == at.length) {
                    at = Arrays.copyOf(at, files * 2);
                    size = Arrays.copyOf(size, files * 2);
                }
                ext.add(extensions.get(i));
                at[files] = locations[i];
                size[files] = sizes[i];
                files++;
            }
            return records++;
        }

        /** @return the finished frame, as a segment over this writer's buffer (no copy) */
        MemorySegment finish() throws IOException {
            byte[][] names = new byte[files][];
            long indexBytes = 8L * records + 4L * records;
            for (int f = 0; f < files; f++) {
                names[f] = ext.get(f).getBytes(StandardCharsets.UTF_8);
                indexBytes += 4 + names[f].length + 8 + 4;
            }
            int indexAt = used;
            reserve(indexBytes);
            ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(0, VERSION).putInt(4, records).putLong(8, indexAt);
            b.position(indexAt + 8 * records);
            for (int r = 0; r < records; r++) {
                b.putLong(indexAt + 8 * r, b.position());
                b.putInt(count[r]);
                for (int f = first[r]; f < first[r] + count[r]; f++) {
                    b.putInt(names[f].length).put(names[f]).putLong(at[f]).putInt(size[f]);
                }
            }
            used = b.position();
            return MemorySegment.ofArray(buf).asSlice(0, used);
        }
    }

    /**
     * @param frame a frame as {@link Writer#finish()} made it
     * @param key the record's key
     * @param handle the record's handle from extraction
     * @return the record, its files read-only views into {@code frame}
     */
    static Record load(MemorySegment frame, String key, long handle) {
        int version = frame.get(INT, 0);
        if (version != VERSION) {
            throw new IllegalStateException("extracted shard frame version " + version + ", expected " + VERSION);
        }
        int records = frame.get(INT, 4);
        if (handle < 0 || handle >= records) {
            throw new IllegalStateException("record handle " + handle + " out of 0.." + (records - 1));
        }
        long indexAt = frame.get(LONG, 8);
        long p = frame.get(LONG, indexAt + 8 * handle);
        int files = frame.get(INT, p);
        p += 4;
        List<RecordFile> out = new ArrayList<>(files);
        for (int f = 0; f < files; f++) {
            int len = frame.get(INT, p);
            byte[] name = frame.asSlice(p + 4, len).toArray(ValueLayout.JAVA_BYTE);
            p += 4 + len;
            long at = frame.get(LONG, p);
            int size = frame.get(INT, p + 8);
            p += 12;
            if (at < 0) {
                throw new IllegalStateException("a dry-run extraction holds no bytes");
            }
            out.add(new RecordFile(new String(name, StandardCharsets.UTF_8), frame.asSlice(at, size).asByteBuffer()));
        }
        return new Record(key, out);
    }

    /**
     * The frame of just some records of {@code frame}: record {@code i} of the result is record
     * {@code handles[i]} of the source, files and extensions unchanged. The result is
     * {@link TaskOutput} memory, so inside a task it becomes the stored object without a copy;
     * each selected byte is copied once.
     *
     * @param frame a frame as {@link Writer#finish()} made it, with bytes (not a dry run's)
     * @param handles record handles of {@code frame}, in the order wanted
     * @param n how many of {@code handles} to take
     */
    static MemorySegment select(MemorySegment frame, long[] handles, int n) {
        int version = frame.get(INT, 0);
        if (version != VERSION) {
            throw new IllegalStateException("extracted shard frame version " + version + ", expected " + VERSION);
        }
        int records = frame.get(INT, 4);
        long indexAt = frame.get(LONG, 8);
        long content = 0;
        long index = 8L * n;
        for (int i = 0; i < n; i++) {
            if (handles[i] < 0 || handles[i] >= records) {
                throw new IllegalStateException("record handle " + handles[i] + " out of 0.." + (records - 1));
            }
            long p = frame.get(LONG, indexAt + 8 * handles[i]);
            int files = frame.get(INT, p);
            p += 4;
            index += 4;
            for (int f = 0; f < files; f++) {
                int len = frame.get(INT, p);
                content += frame.get(INT, p + 4 + len + 8);
                index += 4 + len + 12;
                p += 4 + len + 12;
            }
        }
        MemorySegment out = TaskOutput.allocate(HEADER + content + index);
        long bytesAt = HEADER;
        long outIndexAt = HEADER + content;
        long entryAt = outIndexAt + 8L * n;
        out.set(INT, 0, VERSION);
        out.set(INT, 4, n);
        out.set(LONG, 8, outIndexAt);
        for (int i = 0; i < n; i++) {
            long p = frame.get(LONG, indexAt + 8 * handles[i]);
            int files = frame.get(INT, p);
            out.set(LONG, outIndexAt + 8L * i, entryAt);
            out.set(INT, entryAt, files);
            p += 4;
            entryAt += 4;
            for (int f = 0; f < files; f++) {
                int len = frame.get(INT, p);
                MemorySegment.copy(frame, p, out, entryAt, 4 + len);
                p += 4 + len;
                entryAt += 4 + len;
                long at = frame.get(LONG, p);
                int size = frame.get(INT, p + 8);
                if (at < 0) {
                    throw new IllegalStateException("a dry-run extraction holds no bytes");
                }
                MemorySegment.copy(frame, at, out, bytesAt, size);
                out.set(LONG, entryAt, bytesAt);
                out.set(INT, entryAt + 8, size);
                p += 12;
                entryAt += 12;
                bytesAt += size;
            }
        }
        return out;
    }
}
