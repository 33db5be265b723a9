package dev.croupier.objectstore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The spill log: small records saying which object lies in which spill file at which offset,
 * and when objects and files die, kept in a Chronicle Queue ({@link SpillLogQueue}) or, where
 * Chronicle cannot work, in a plain index file. Payloads are not in the log.
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
 * <p>Chronicle needs deep reflection into {@code java.base} ({@code --add-opens
 * java.base/java.lang.reflect} and {@code --add-exports java.base/sun.nio.ch}); in an
 * application that embeds the store without those flags it throws an {@link AssertionError}
 * from deep inside. The log is advisory (the store's own table is the truth), so the store then
 * writes the same records, with positional writes, to the index file {@value #INDEX_FILE} beside
 * the queue's directory. Whether Chronicle can work is decided once per JVM: by a module check
 * when this class is initialized (no exception thrown, no Chronicle class initialized), then by
 * the first failure of Chronicle to build or append, which sends every later log of the JVM to
 * the index file. {@link #readAll} reads the queue, then the index file, whichever exist.
 *
 * <pre>
 * record (one Chronicle document, or 56 bytes of the index file; little-endian)
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
 * <p>Thread-safety: not thread-safe; the store calls it under its lock.
 */
final class SpillLog implements AutoCloseable {

    /** The system property that keeps Chronicle from reporting usage to Google Analytics. */
    static final String ANALYTICS_PROPERTY = "chronicle.analytics.disable";

    static {
        // A library must not contact any host on its own. Chronicle reads this property when it
        // first runs, and every way into Chronicle goes through this class (SpillLogQueue is
        // used nowhere else), so this runs first. An application's own setting stands.
        if (System.getProperty(ANALYTICS_PROPERTY) == null) {
            System.setProperty(ANALYTICS_PROPERTY, "true");
        }
    }

    /** Format version of every record. */
    static final byte VERSION = 1;
    static final byte SPILLED = 1;
    static final byte DEAD = 2;
    static final byte FILE_DELETED = 3;
    /** Size of one record. */
    static final int RECORD_BYTES = 56;

    /** Directory name of the Chronicle queue inside the store's spill directory. */
    static final String DIRECTORY = "spill-log";
    /** Name of the index file, in the store's spill directory, that replaces the queue where Chronicle cannot work. */
    static final String INDEX_FILE = "spill-log.idx";

    /**
     * Free space below which the log stops appending. Chronicle writes through mappings of
     * sparse files, so a write into a full file system faults instead of failing cleanly; the
     * log is advisory (the store's own table is the truth), so it stops rather than risk that.
     */
    static final long RESERVE_BYTES = 4L << 20;

    /** Why Chronicle cannot keep logs in this JVM, or null while it is believed to work. */
    private static volatile Throwable chronicleUnusable = chronicleAccessProblem();

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

        /** Writes the record's {@link #RECORD_BYTES} at the buffer's position (little-endian). */
        void writeTo(ByteBuffer out) {
            out.put(VERSION).put(kind).put(SpillFrame.codecOf(compression)).put((byte) 0).putInt(fileNumber)
                    .putLong(id == null ? 0 : id.high()).putLong(id == null ? 0 : id.low())
                    .putLong(frameOffset).putLong(rawLength).putLong(storedLength).putLong(0);
        }

        /**
         * Reads one record at the buffer's position (little-endian).
         *
         * @param where the log and the record's number, for error messages
         */
        static Entry readFrom(ByteBuffer in, String where) {
            if (in.remaining() < RECORD_BYTES) {
                throw new ObjectStoreException("spill log " + where + " is " + in.remaining()
                        + " bytes long, not " + RECORD_BYTES);
            }
            byte version = in.get();
            if (version != VERSION) {
                throw new ObjectStoreException("spill log " + where + " has unsupported version " + version);
            }
            byte kind = in.get();
            Compression compression = SpillFrame.compressionOf(in.get());
            in.get();
            int file = in.getInt();
            long high = in.getLong();
            long low = in.getLong();
            Entry entry = new Entry(kind, file, kind == FILE_DELETED ? null : new ObjectId(high, low),
                    in.getLong(), in.getLong(), in.getLong(), compression);
            in.getLong();
            return entry;
        }
    }

    private final Path spillDir;
    /**
     * The spill directory's file system, found once: finding it reads the mount table, which
     * cost about 60 us per record when done on every append; its free space is one statvfs.
     */
    private FileStore fileStore;
    private final ByteBuffer record = ByteBuffer.allocate(RECORD_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    /** The Chronicle queue, or null if this log writes (or will write) the index file. */
    private SpillLogQueue queue;
    /** The index file, opened at its first record. */
    private FileChannel index;
    private long indexEnd;
    private boolean stopped;

    /** Creates the log of the store whose own spill directory is {@code spillDir}. */
    SpillLog(Path spillDir) {
        this(spillDir, chronicleUnusable == null);
    }

    /**
     * Creates the log in a Chronicle queue if {@code tryChronicle} and Chronicle works, else in
     * the index file (tests pass false to get the index file where Chronicle works).
     */
    SpillLog(Path spillDir, boolean tryChronicle) {
        this.spillDir = spillDir;
        if (tryChronicle) {
            try {
                queue = new SpillLogQueue(spillDir.resolve(DIRECTORY));
            } catch (Throwable t) {
                giveUpChronicle(t);
                // a queue that failed to build may have left its metadata file; a reader must
                // find the index file alone, not a queue it may be unable to open
                deleteRecursively(spillDir.resolve(DIRECTORY));
            }
        }
    }

    /**
     * Returns why Chronicle cannot work in this JVM, judged without running it: its classes must
     * be present and {@code java.base} must open {@code java.lang.reflect} and export
     * {@code sun.nio.ch} to them (what the queue needed on JDK 25 when measured; a later need
     * shows up as the first failure instead). Loads one Chronicle class and initializes none.
     */
    private static Throwable chronicleAccessProblem() {
        Module chronicle;
        try {
            chronicle = Class.forName("net.openhft.chronicle.core.OS", false, SpillLog.class.getClassLoader())
                    .getModule();
        } catch (ClassNotFoundException | LinkageError e) {
            return e;
        }
        Module base = Object.class.getModule();
        if (!base.isOpen("java.lang.reflect", chronicle) || !base.isExported("sun.nio.ch", chronicle)) {
            return new IllegalAccessException("java.base does not open java.lang.reflect and export sun.nio.ch to "
                    + chronicle + " (--add-opens java.base/java.lang.reflect=ALL-UNNAMED"
                    + " --add-exports java.base/sun.nio.ch=ALL-UNNAMED)");
        }
        return null;
    }

    /** Records that Chronicle failed: this log and every later one of the JVM use the index file. */
    private void giveUpChronicle(Throwable why) {
        chronicleUnusable = why;
        closeQueue();
    }

    private void closeQueue() {
        if (queue != null) {
            try {
                queue.close();
            } catch (Throwable t) {
                // its records so far stay on disk, and the store deletes them at its close
            }
            queue = null;
        }
    }

    void spilled(ObjectId id, SpillRecord record, long rawLength) {
        append(new Entry(SPILLED, record.file().number, id, record.frameOffset(), rawLength,
                record.storedLength(), record.compression()));
    }

    void dead(ObjectId id, SpillRecord record, long rawLength) {
        append(new Entry(DEAD, record.file().number, id, record.frameOffset(), rawLength,
                record.storedLength(), record.compression()));
    }

    void fileDeleted(int fileNumber) {
        append(new Entry(FILE_DELETED, fileNumber, null, 0, 0, 0, Compression.NONE));
    }

    /** Appends one record, unless the log has stopped. */
    void append(Entry entry) {
        if (stopped) {
            return;
        }
        try {
            if (fileStore == null) {
                fileStore = Files.getFileStore(spillDir);
            }
            if (fileStore.getUsableSpace() < RESERVE_BYTES) {
                stopped = true;
                return;
            }
        } catch (IOException e) {
            stopped = true;
            return;
        }
        record.clear();
        entry.writeTo(record);
        if (queue != null) {
            try {
                queue.append(record.array());
                return;
            } catch (Throwable t) {
                // a fault in the mapped queue file, or Chronicle failing in this JVM: the records
                // so far stay in the queue, this one and the rest go to the index file after them
                giveUpChronicle(t);
            }
        }
        try {
            if (index == null) {
                index = FileChannel.open(spillDir.resolve(INDEX_FILE), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
            }
            record.flip();
            while (record.hasRemaining()) {
                indexEnd += index.write(record, indexEnd);
            }
        } catch (IOException | RuntimeException e) {
            // for example a full disk: stop logging, the store itself is unaffected
            stopped = true;
        }
    }

    /**
     * Reads every record of a store's spill log, oldest first: the Chronicle queue's, then the
     * index file's. Usable from another process; a queue can only be read where Chronicle works.
     *
     * @param spillDir the store's own spill directory ({@code croupier-store-<name>})
     * @return the records
     * @throws ObjectStoreException if a record is damaged or the queue cannot be read here
     */
    static List<Entry> readAll(Path spillDir) {
        List<Entry> out = new ArrayList<>();
        Path queueDir = spillDir.resolve(DIRECTORY);
        if (Files.isDirectory(queueDir)) {
            Throwable unusable = chronicleUnusable;
            if (unusable != null) {
                throw new ObjectStoreException("spill log " + queueDir + " is a Chronicle queue, which this JVM"
                        + " cannot read: " + unusable, unusable);
            }
            try {
                SpillLogQueue.readAll(queueDir, in -> out.add(Entry.readFrom(in, queueDir + " record " + out.size())));
            } catch (ObjectStoreException e) {
                throw e;
            } catch (Throwable t) {
                throw new ObjectStoreException("cannot read spill log " + queueDir + ": " + t, t);
            }
        }
        Path indexFile = spillDir.resolve(INDEX_FILE);
        if (Files.exists(indexFile)) {
            ByteBuffer in;
            try {
                in = ByteBuffer.wrap(Files.readAllBytes(indexFile)).order(ByteOrder.LITTLE_ENDIAN);
            } catch (IOException e) {
                throw new ObjectStoreException("cannot read spill log " + indexFile + ": " + e.getMessage(), e);
            }
            // a record the store is appending right now may be cut short: it is not there yet
            for (long n = 0; in.remaining() >= RECORD_BYTES; n++) {
                out.add(Entry.readFrom(in, indexFile + " record " + n));
            }
        }
        return out;
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // left for the store's close, which deletes its whole directory
        }
    }

    @Override
    public void close() {
        closeQueue();
        if (index != null) {
            try {
                index.close();
            } catch (IOException e) {
                // the store deletes the index file next; a failed close loses nothing
            }
            index = null;
        }
        stopped = true;
    }
}
