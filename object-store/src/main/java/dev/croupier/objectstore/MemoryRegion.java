package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The store's memory: one file of {@code capacity} bytes mapped read-write into a shared
 * {@link Arena}, carved up by a {@link FreeListAllocator}.
 *
 * <p>Design note: the file lives in the memory directory (tmpfs {@code /dev/shm} by default), so
 * its pages are RAM that other processes can map by (file, offset, length) for zero-copy reads,
 * as Ray's plasma store does. Closing the arena unmaps the file at once (no wait for GC). The
 * file is {@link NativeFiles#reserve reserved} up front so that touching a page can never fault
 * on a full tmpfs: the capacity is committed when the store starts.
 *
 * <p>Thread-safety: segments may be used from any thread; allocation is not thread-safe and is
 * called under the store's lock.
 */
final class MemoryRegion implements AutoCloseable {

    /** Name of the mapped file inside the store's memory directory. */
    static final String FILE_NAME = "memory.region";

    private final Path file;
    private final Arena arena;
    private final MemorySegment region;
    private final FreeListAllocator allocator;

    MemoryRegion(Path dir, long capacity) throws IOException {
        this.file = dir.resolve(FILE_NAME);
        long mappedBytes = Math.max(FreeListAllocator.ALIGNMENT, capacity - capacity % FreeListAllocator.ALIGNMENT);
        NativeFiles.reserve(file, mappedBytes);
        Arena mapArena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            this.region = channel.map(FileChannel.MapMode.READ_WRITE, 0, mappedBytes, mapArena);
        } catch (IOException | RuntimeException e) {
            mapArena.close();
            throw e;
        }
        this.arena = mapArena;
        this.allocator = new FreeListAllocator(capacity);
    }

    /** Returns the mapped file, for {@link ObjectLocation}s. */
    Path file() {
        return file;
    }

    /** Returns the allocator; call under the store's lock. */
    FreeListAllocator allocator() {
        return allocator;
    }

    /** Returns a writable slice of the region. */
    MemorySegment slice(long offset, long size) {
        return region.asSlice(offset, size);
    }

    /** Unmaps the region; segments handed out become inaccessible. */
    @Override
    public void close() {
        arena.close();
    }
}
