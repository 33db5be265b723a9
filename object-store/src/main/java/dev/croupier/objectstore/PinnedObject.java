package dev.croupier.objectstore;

import java.lang.foreign.MemorySegment;

/**
 * A read-only view of a sealed object, pinned in memory until {@link #close()}: a pinned object
 * is never spilled or freed, even if deleted meanwhile (the free is deferred to the last unpin).
 *
 * <p>Thread-safety: the view may be read by many threads; {@code close} is idempotent and
 * thread-safe.
 */
public interface PinnedObject extends AutoCloseable {

    /**
     * Returns the object's id.
     *
     * @return the id
     */
    ObjectId id();

    /**
     * Returns a read-only view of the object's bytes, valid until {@link #close()}.
     *
     * @return the view
     */
    MemorySegment segment();

    /**
     * Returns the object's size in bytes.
     *
     * @return the size
     */
    long size();

    /** Unpins the object. Idempotent. */
    @Override
    void close();
}
