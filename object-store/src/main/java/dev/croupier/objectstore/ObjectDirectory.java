package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * Where a store's sealed objects lie in its memory region, in a shared-memory file beside the
 * region ({@value #FILE_NAME}), so that a process on the same host finds an object's bytes and
 * copies them without a call to the store's process: no round trip, no thread to wake.
 *
 * <pre>
 *  header, one 64-byte line                  slot i (i &lt; slots), one 64-byte line
 *  +---------+----------+-------+-----+      +-----+-------+--------+-------+--------+--------+-----+
 *  | magic 8 | version 4| slots | pad |      | seq | state | idHigh | idLow | offset | length | pad |
 *  +---------+----------+-------+-----+      +-----+-------+--------+-------+--------+--------+-----+
 *                                               8      8       8       8       8        8       16
 * </pre>
 *
 * <p>Design. The store writes slots under its lock (one writer); readers in other processes
 * read them with no lock, as a sequence lock: a slot's {@code seq} is odd while the store
 * rewrites it and grows by two with every rewrite. A slot is listed when an object is sealed or
 * restored into the region and unlisted <em>before</em> its memory is freed or evicted, so a
 * reader that copies an object's bytes and then finds the slot's {@code seq} unchanged
 * ({@link #unchanged}) knows the bytes were not reused while it copied; if the seq moved, it
 * throws the copy away and asks the store. A slot belongs to an id by open addressing from the
 * id's hash, at most {@value #PROBES} slots on: an object that finds no free slot there is
 * simply not listed, and readers ask the store for it. States are empty (never used, which ends
 * a search), listed, and unlisted (reusable, a search goes on past it).
 *
 * <p>Thread-safety: {@link #list} and {@link #unlist} are called under the store's lock; the
 * static readers are safe from any thread or process.
 */
public final class ObjectDirectory implements AutoCloseable {

    /** The file's name inside the store's memory directory, beside {@code memory.region}. */
    public static final String FILE_NAME = "memory.directory";

    static final long MAGIC = 0x43525044_49523031L; // "CRPDIR01"
    static final int VERSION = 1;
    static final int LINE = 64;
    /** Slots searched from an id's home slot before giving up. */
    static final int PROBES = 32;

    private static final long SEQ = 0;
    private static final long STATE = 8;
    private static final long ID_HIGH = 16;
    private static final long ID_LOW = 24;
    private static final long OFFSET = 32;
    private static final long LENGTH = 40;

    private static final long EMPTY = 0;
    private static final long LISTED = 1;
    private static final long UNLISTED = 2;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final Path file;
    private final NativeFiles.Mapping mapping;
    private final MemorySegment lines;
    private final int mask;

    /**
     * Creates the directory file in {@code dir} with room for {@code slots} objects (rounded up
     * to a power of two), its blocks reserved: a write to a page of a shared mapping that the
     * file system cannot back is a SIGBUS, so the memory folder gives them now or the store
     * keeps no directory.
     *
     * @throws IOException if the folder has no room for it
     */
    ObjectDirectory(Path dir, int slots) throws IOException {
        int count = Integer.highestOneBit(Math.max(PROBES, slots) - 1) << 1;
        this.file = dir.resolve(FILE_NAME);
        long bytes = (long) LINE * (count + 1L);
        NativeFiles.reserve(file, 0, bytes);
        this.mapping = NativeFiles.mapShared(file, bytes);
        this.lines = mapping.segment();
        this.mask = count - 1;
        lines.set(ValueLayout.JAVA_INT, 8, VERSION);
        lines.set(ValueLayout.JAVA_INT, 12, count);
        LONG.setRelease(lines, 0L, MAGIC); // last: a reader that sees the magic sees the size
    }

    /**
     * Slots for a region of {@code regionBytes}: two per 64 KiB, the smallest object a node keeps
     * in its store (so 2 MiB of directory per GiB of region; at most 256 MiB).
     */
    static int slotsFor(long regionBytes) {
        return (int) Math.min(1 << 22, Math.max(1024, 2 * (regionBytes >> 16)));
    }

    Path file() {
        return file;
    }

    /**
     * Lists {@code name} at {@code [offset, offset + length)} of the region; returns its slot,
     * or -1 when no slot near its home is free (readers then ask the store).
     */
    int list(ObjectId name, long offset, long length) {
        int home = home(name, mask);
        for (int probe = 0; probe < PROBES; probe++) {
            int slot = (home + probe) & mask;
            long at = slotAt(slot);
            if ((long) LONG.get(lines, at + STATE) != LISTED) {
                long seq = (long) LONG.get(lines, at + SEQ);
                LONG.setVolatile(lines, at + SEQ, seq + 1);
                lines.set(ValueLayout.JAVA_LONG, at + ID_HIGH, name.high());
                lines.set(ValueLayout.JAVA_LONG, at + ID_LOW, name.low());
                lines.set(ValueLayout.JAVA_LONG, at + OFFSET, offset);
                lines.set(ValueLayout.JAVA_LONG, at + LENGTH, length);
                lines.set(ValueLayout.JAVA_LONG, at + STATE, LISTED);
                LONG.setRelease(lines, at + SEQ, seq + 2);
                return slot;
            }
        }
        return -1;
    }

    /**
     * Unlists the object of {@code slot}. Called before its memory is freed or evicted: the seq
     * it moves is what tells a reader copying it that the bytes may have changed.
     */
    void unlist(int slot) {
        long at = slotAt(slot);
        long seq = (long) LONG.get(lines, at + SEQ);
        LONG.setVolatile(lines, at + SEQ, seq + 1);
        lines.set(ValueLayout.JAVA_LONG, at + STATE, UNLISTED);
        LONG.setVolatile(lines, at + SEQ, seq + 2);
    }

    /** Unmaps the directory; the file goes with the store's memory directory. */
    @Override
    public void close() {
        mapping.close();
    }

    /**
     * Where an object was listed: its slot and the slot's seq when read, and the object's
     * bytes in the region.
     *
     * @param slot the slot's index
     * @param seq the slot's seq when it was read; {@link #unchanged} compares with it
     * @param offset where the object's bytes start in the store's memory region
     * @param length the object's bytes
     */
    public record Listing(int slot, long seq, long offset, long length) { }

    /**
     * Finds {@code id} in {@code directory}, a mapping of a store's directory file (read-only
     * is enough). Returns null when it is not listed, when the file is not a directory of this
     * version, or when the store is rewriting a slot on the way (the caller asks the store
     * instead).
     *
     * @param directory the mapped file
     * @param id the object
     * @return where the object lies, or null
     */
    public static Listing find(MemorySegment directory, ObjectId id) {
        if (directory.byteSize() < LINE || (long) LONG.getAcquire(directory, 0L) != MAGIC) {
            return null;
        }
        int count = directory.get(ValueLayout.JAVA_INT, 12);
        if (directory.get(ValueLayout.JAVA_INT, 8) != VERSION || Integer.bitCount(count) != 1
                || (long) LINE * (count + 1L) > directory.byteSize()) {
            return null; // another layout, or not a directory: the caller asks the store
        }
        int home = home(id, count - 1);
        for (int probe = 0; probe < PROBES; probe++) {
            int slot = (home + probe) & (count - 1);
            long at = slotAt(slot);
            long seq = (long) LONG.getAcquire(directory, at + SEQ);
            if ((seq & 1) != 0) {
                return null;
            }
            long state = directory.get(ValueLayout.JAVA_LONG, at + STATE);
            long high = directory.get(ValueLayout.JAVA_LONG, at + ID_HIGH);
            long low = directory.get(ValueLayout.JAVA_LONG, at + ID_LOW);
            long offset = directory.get(ValueLayout.JAVA_LONG, at + OFFSET);
            long length = directory.get(ValueLayout.JAVA_LONG, at + LENGTH);
            VarHandle.acquireFence();
            if ((long) LONG.getVolatile(directory, at + SEQ) != seq) {
                return null;
            }
            if (state == EMPTY) {
                return null;
            }
            if (state == LISTED && high == id.high() && low == id.low()) {
                return new Listing(slot, seq, offset, length);
            }
        }
        return null;
    }

    /**
     * Whether {@code listing} still holds: called after copying the object's bytes, it says
     * the store did not unlist the object (so did not free or move its bytes) since
     * {@link #find} read the slot, so the copy is whole.
     *
     * @param directory the same mapping {@code find} read
     * @param listing what it found
     * @return true if the copy made since is the object's
     */
    public static boolean unchanged(MemorySegment directory, Listing listing) {
        VarHandle.acquireFence(); // the copy's reads happen before the seq is read again
        return (long) LONG.getVolatile(directory, slotAt(listing.slot()) + SEQ) == listing.seq();
    }

    private static long slotAt(int slot) {
        return (long) LINE * (slot + 1L);
    }

    private static int home(ObjectId id, int mask) {
        long h = (id.high() * 0x9E3779B97F4A7C15L) ^ id.low();
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
