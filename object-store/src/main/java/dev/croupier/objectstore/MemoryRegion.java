package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The store's memory: {@code capacity} bytes mapped read-write into a shared {@link Arena},
 * carved up by a {@link FreeListAllocator}. Either a file of the memory folder, which other
 * processes may map, or this process's own anonymous memory.
 *
 * <p>Design note: a shared region's file lives in the memory directory (tmpfs {@code /dev/shm}
 * by default), so its pages are RAM that other processes can map by (file, offset, length) for
 * zero-copy reads, as Ray's plasma store does. A store only its own process reads (the nodes of
 * an embedded cluster, or a node process whose store /dev/shm has no room for) needs no file:
 * its region is {@link NativeFiles#mapPrivate private} memory, whose fresh pages cost less to
 * touch, and which leaves nothing in the memory folder if the process is killed. Closing the
 * arena unmaps the region at once (no wait for GC). The region starts sparse, so a store costs
 * memory only as it is used: blocks are made real ahead of the highest byte handed out
 * ({@link #reserveTo}), {@value #GROWTH_BYTES} bytes at a time, before anything is written
 * there. A file's blocks are first {@link NativeFiles#reserve reserved}, so touching a page can
 * never fault on a full tmpfs; when the memory folder is full the reservation fails, and the
 * store gives up the rest of its capacity ({@link FreeListAllocator#retire}) instead. The blocks
 * are then {@link NativeFiles#populate populated} into the mapping, so the writers that fill
 * them take no page fault per page. A file's mapping is {@link NativeFiles#adviseRandom advised random},
 * which makes its close cheaper.
 *
 * <p>Thread-safety: segments may be used from any thread; allocation is not thread-safe and is
 * called under the store's lock.
 */
final class MemoryRegion implements AutoCloseable {

    /** Name of the mapped file inside the store's memory directory. */
    static final String FILE_NAME = "memory.region";

    /** The mapped file, or null for private memory. */
    private final Path file;
    private final NativeFiles.Mapping mapping;
    private final MemorySegment region;
    private final FreeListAllocator allocator;
    private final long mappedBytes;
    /** Bytes from the start that have real blocks; nothing beyond is ever handed out. */
    private long reserved;
    /** Why the region could not grow, once it could not; null while it can. */
    private IOException full;
    /** Where its sealed objects lie, for readers on this host; null if the store keeps none. */
    private final ObjectDirectory directory;

    /** How far ahead of use the region's blocks are reserved: one call per this many bytes. */
    static final long GROWTH_BYTES = 32L << 20;

    /**
     * @param dir the store's folder in the memory directory
     * @param listed whether to keep a directory of the objects for readers on this host
     * @param shared whether other processes may map the region: a file in {@code dir}; else
     *     private memory where the platform gives it (a file otherwise)
     */
    MemoryRegion(Path dir, long capacity, boolean listed, boolean shared) throws IOException {
        long mappedBytes = Math.max(FreeListAllocator.ALIGNMENT, capacity - capacity % FreeListAllocator.ALIGNMENT);
        this.mappedBytes = mappedBytes;
        NativeFiles.Mapping own = shared ? null : NativeFiles.mapPrivate(mappedBytes);
        if (own != null) {
            this.file = null;
            this.mapping = own;
        } else {
            this.file = dir.resolve(FILE_NAME);
            try (java.io.RandomAccessFile sparse = new java.io.RandomAccessFile(file.toFile(), "rw")) {
                sparse.setLength(mappedBytes);
            }
            this.mapping = NativeFiles.mapShared(file, mappedBytes);
            NativeFiles.adviseRandom(mapping.segment());
        }
        this.region = mapping.segment();
        this.allocator = new FreeListAllocator(capacity);
        this.directory = listed ? directoryOrNone(dir, capacity) : null;
    }

    /**
     * Makes sure {@code [0, end)} has real blocks, reserving up to {@value #GROWTH_BYTES} bytes
     * ahead. Returns false if the memory folder cannot give them; call under the store's lock.
     */
    boolean reserveTo(long end) {
        if (end <= reserved) {
            return true;
        }
        long needed = Math.min(mappedBytes, (end + FreeListAllocator.PAGE - 1) & -FreeListAllocator.PAGE);
        long ahead = Math.min(mappedBytes, Math.max(needed, reserved + GROWTH_BYTES));
        for (long target : new long[] {ahead, needed}) {
            try {
                if (file != null) {
                    NativeFiles.reserve(file, reserved, target - reserved);
                }
                NativeFiles.populate(region.asSlice(reserved, target - reserved));
                reserved = target;
                return true;
            } catch (IOException e) {
                full = e; // try again for exactly what is needed
            }
        }
        return false;
    }

    /** Bytes from the start with real blocks. */
    long reserved() {
        return reserved;
    }

    /** Why the region stopped growing, or null. */
    IOException full() {
        return full;
    }

    /** Returns the mapped file, for {@link ObjectLocation}s; null for private memory. */
    Path file() {
        return file;
    }

    /**
     * A directory for the region, or none when the memory folder has no room for it: readers on
     * the host then ask the store for every object, which is slower but loses nothing.
     */
    private static ObjectDirectory directoryOrNone(Path dir, long capacity) {
        try {
            return new ObjectDirectory(dir, ObjectDirectory.slotsFor(capacity));
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(dir.resolve(ObjectDirectory.FILE_NAME));
            } catch (IOException ignored) {
                // the store's directories are emptied at close anyway
            }
            System.getLogger(MemoryRegion.class.getName()).log(System.Logger.Level.WARNING, "memory folder " + dir
                    + " has no room for the store's object directory (" + e.getMessage()
                    + "); readers on this host will ask the store for each object");
            return null;
        }
    }

    /** The directory of the region's sealed objects, or null if the store keeps none. */
    ObjectDirectory directory() {
        return directory;
    }

    /** Returns the allocator; call under the store's lock. */
    FreeListAllocator allocator() {
        return allocator;
    }

    /** Returns a writable slice of the region. */
    MemorySegment slice(long offset, long size) {
        return region.asSlice(offset, size);
    }

    /** Unmaps the region and its directory; segments handed out become inaccessible. */
    @Override
    public void close() {
        mapping.close();
        if (directory != null) {
            directory.close();
        }
    }
}
