package dev.croupier.objectstore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The spill log: a Chronicle Queue of small records saying which object lies in which spill
 * file at which offset, and when objects and files die. Payloads are not in the queue.
 *
 * <p>Design note: Chronicle Queue was the intended home of spilled payloads. Measured here
 * ({@code SpillLogChoiceBenchmark}, see docs/object-store.md) it appends 1 MiB payloads as fast
 * as plain files, but (1) it cannot take bytes straight from the store's shared-arena memory
 * (Chronicle needs a raw buffer address the JDK withholds for closeable shared sessions), so
 * every payload costs an extra copy; (2) its files roll by time, not size, so fused files of a
 * chosen size that are deleted when their objects die are not possible; (3) it writes through
 * memory mappings of sparse files, so a full disk is an {@link InternalError} from SIGBUS that
 * leaves a half-written excerpt, where the store must report a clean
 * {@link SpillFailedException} and lose nothing. So payloads go to plain files written with
 * large positional writes ({@link SpillFile}), and Chronicle keeps the index, where its
 * microsecond appends and tailing readers fit: another process can tail the log to find a
 * spilled object's (file, offset, length) and map it.
 *
 * <pre>
 * record (one Chronicle document, 56 bytes, little-endian)
 *  0     1      2      3      4          8              24            32           40            48      56
 *  +-----+------+------+------+----------+--------------+-------------+------------+-------------+-------+
 *  |ver=1| kind |codec | rsvd | file no. | object id    | frame offset| raw length | stored len. | rsvd  |
 *  +-----+------+------+------+----------+--------------+-------------+------------+-------------+-------+
 *   u8 version, u8 kind, u8 codec, u8 reserved, u32 file number, u64 id high, u64 id low,
 *   u64 frame offset, u64 raw length, u64 stored length, u64 reserved
 * kind: 1 = SPILLED (object written to the frame), 2 = DEAD (spill copy no longer
 * needed), 3 = FILE_DELETED (id fields zero)
 * </pre>
 *
 * <p>Thread-safety: not thread-safe; the store calls it under its lock (the appender's own
 * single-thread check is switched off for that reason).
 */
final class SpillLog implements AutoCloseable {

    /** Format version of every record. */
    static final byte VERSION = 1;
    static final byte SPILLED = 1;
    static final byte DEAD = 2;
    static final byte FILE_DELETED = 3;

    /** Directory name of the queue inside the store's spill directory. */
    static final String DIRECTORY = "spill-log";
    private static final long BLOCK_BYTES = 1L << 20;

    /**
     * One decoded record.
     *
     * @param kind SPILLED, DEAD or FILE_DELETED
     * @param fileNumber the spill file's number
     * @param id the object (null for FILE_DELETED)
     * @param frameOffset the frame's offset in the file
     * @param rawLength the object's size
     * @param storedLength payload bytes on disk
     * @param compression the payload's codec
     */
    record Entry(byte kind, int fileNumber, ObjectId id, long frameOffset, long rawLength, long storedLength,
                 Compression compression) {
    }

    /**
     * Free space below which the log stops appending. Chronicle writes through mappings of
     * sparse files, so a write into a full file system faults instead of failing cleanly; the
     * log is advisory (the store's own table is the truth), so it stops rather than risk that.
     */
    static final long RESERVE_BYTES = 4L << 20;

    private final Path dir;
    private final ChronicleQueue queue;
    private final ExcerptAppender appender;
    private boolean stopped;

    SpillLog(Path spillDir) {
        this.dir = spillDir.resolve(DIRECTORY);
        ChronicleQueue q = null;
        ExcerptAppender a = null;
        try {
            q = open(dir, false);
            a = q.createAppender();
            a.singleThreadedCheckDisabled(true);
        } catch (InternalError | RuntimeException e) {
            // cannot create the queue (for example on a full disk): run without a log
            if (q != null) {
                q.close();
            }
            q = null;
            a = null;
        }
        this.queue = q;
        this.appender = a;
        this.stopped = q == null;
    }

    private static ChronicleQueue open(Path dir, boolean readOnly) {
        return SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FAST_DAILY).blockSize(BLOCK_BYTES)
                .readOnly(readOnly).build();
    }

    void spilled(ObjectId id, SpillRecord record, long rawLength) {
        append(SPILLED, record.file().number, id, record.frameOffset(), rawLength, record.storedLength(),
                record.compression());
    }

    void dead(ObjectId id, SpillRecord record, long rawLength) {
        append(DEAD, record.file().number, id, record.frameOffset(), rawLength, record.storedLength(),
                record.compression());
    }

    void fileDeleted(int fileNumber) {
        append(FILE_DELETED, fileNumber, null, 0, 0, 0, Compression.NONE);
    }

    private void append(byte kind, int fileNumber, ObjectId id, long frameOffset, long rawLength,
                        long storedLength, Compression compression) {
        if (stopped) {
            return;
        }
        try {
            if (Files.getFileStore(dir).getUsableSpace() < RESERVE_BYTES) {
                stopped = true;
                return;
            }
        } catch (IOException e) {
            stopped = true;
            return;
        }
        try {
            write(kind, fileNumber, id, frameOffset, rawLength, storedLength, compression);
        } catch (InternalError | RuntimeException e) {
            // a fault in the mapped queue file: stop logging, the store itself is unaffected
            stopped = true;
        }
    }

    private void write(byte kind, int fileNumber, ObjectId id, long frameOffset, long rawLength,
                       long storedLength, Compression compression) {
        try (DocumentContext dc = appender.writingDocument()) {
            Bytes<?> b = dc.wire().bytes();
            b.writeByte(VERSION).writeByte(kind).writeByte(SpillFrame.codecOf(compression)).writeByte((byte) 0)
                    .writeInt(fileNumber)
                    .writeLong(id == null ? 0 : id.high()).writeLong(id == null ? 0 : id.low())
                    .writeLong(frameOffset).writeLong(rawLength).writeLong(storedLength).writeLong(0);
        }
    }

    /**
     * Reads every record of a store's spill log, oldest first; usable from another process.
     *
     * @param spillDir the store's own spill directory ({@code croupier-store-<name>})
     * @return the records
     */
    static List<Entry> readAll(Path spillDir) {
        List<Entry> out = new ArrayList<>();
        try (ChronicleQueue q = open(spillDir.resolve(DIRECTORY), true); ExcerptTailer tailer = q.createTailer()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    byte version = b.readByte();
                    if (version != VERSION) {
                        throw new ObjectStoreException("spill log in " + spillDir + ": record "
                                + dc.index() + " has unsupported version " + version);
                    }
                    byte kind = b.readByte();
                    Compression compression = SpillFrame.compressionOf(b.readByte());
                    b.readByte();
                    int file = b.readInt();
                    long high = b.readLong();
                    long low = b.readLong();
                    out.add(new Entry(kind, file, kind == FILE_DELETED ? null : new ObjectId(high, low),
                            b.readLong(), b.readLong(), b.readLong(), compression));
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (queue != null) {
            try {
                appender.close();
                queue.close();
                // Chronicle unmaps closed files on a background thread; wait for it, so the
                // store's files are really gone (and their file system unmountable) at close
                BackgroundResourceReleaser.releasePendingResources();
            } catch (InternalError | RuntimeException e) {
                // the store deletes the queue's files next; a failed close loses nothing
                stopped = true;
            }
        }
    }
}
