package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One object allocated in its own file on disk because memory was full and nothing could be
 * spilled (every resident object pinned), or because it is larger than the whole capacity.
 *
 * <p>Design note: this is Ray's "fallback allocation": it keeps a job live when memory alone
 * cannot. The file's blocks are {@link NativeFiles#reserve reserved} before mapping so a full
 * disk gives an {@link IOException} at creation, never a fault on write. The mapping has its own
 * shared arena, closed (unmapped) with the object; the file is deleted at the same time.
 *
 * <p>Thread-safety: the segment may be used from any thread; {@link #close()} is called once,
 * under the store's lock.
 */
final class FallbackFile implements AutoCloseable {

    private final Path file;
    private final NativeFiles.Mapping mapping;
    private final MemorySegment segment;

    FallbackFile(Path file, long size) throws IOException {
        this.file = file;
        try {
            NativeFiles.reserve(file, size);
        } catch (IOException e) {
            Files.deleteIfExists(file);
            throw e;
        }
        try {
            this.mapping = NativeFiles.mapShared(file, size);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
        this.segment = mapping.segment();
    }

    /** Returns the file, for {@link ObjectLocation}s. */
    Path file() {
        return file;
    }

    /** Returns the object's bytes. */
    MemorySegment segment() {
        return segment;
    }

    /** Unmaps and deletes the file. */
    @Override
    public void close() {
        mapping.close();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new ObjectStoreException("cannot delete fallback file " + file, e);
        }
    }
}
