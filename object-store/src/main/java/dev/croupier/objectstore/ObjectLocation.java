package dev.croupier.objectstore;

import java.nio.file.Path;

/**
 * Where an object's bytes lie, so that another process on the same machine can map them
 * read-only without a copy ({@code FileChannel.map(READ_ONLY, offset, length)}).
 *
 * <p>Thread-safety: immutable value.
 *
 * @param file the file holding the bytes (the memory region, a fallback file or a spill file)
 * @param offset the byte offset of the object's first byte in {@code file}
 * @param length the object's size in bytes
 * @param inMemoryRegion whether {@code file} is the store's shared-memory region, which lives
 *     as long as the store (so a reader may keep it mapped); else a fallback or spill file
 */
public record ObjectLocation(Path file, long offset, long length, boolean inMemoryRegion) {
}
