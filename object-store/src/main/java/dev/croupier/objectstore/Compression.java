package dev.croupier.objectstore;

/**
 * How spilled object bytes are stored on disk. Objects in memory are never compressed.
 *
 * <p>Thread-safety: immutable enum.
 */
public enum Compression {
    /** Bytes are written as they are; a spilled object can be mapped zero-copy by another process. */
    NONE,
    /** Each spilled object is compressed with LZ4 (fast mode) in independent chunks. */
    LZ4
}
