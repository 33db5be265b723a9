package dev.croupier.objectstore;

import java.lang.foreign.MemorySegment;

/**
 * An object being written: a writable segment of exactly the requested size. {@link #seal()}
 * publishes it (readers may then {@code get} it and it becomes immutable); {@link #close()}
 * without sealing aborts and frees it.
 *
 * <p>Thread-safety: meant for one writing thread; {@code seal} and {@code close} may race
 * safely with {@link ObjectStore#delete} from other threads.
 */
public interface WritableObject extends AutoCloseable {

    /**
     * Returns the object's id.
     *
     * @return the id
     */
    ObjectId id();

    /**
     * Returns the writable bytes of the object, exactly the size given to {@code create}. Must
     * not be used after {@link #seal()} or {@link #close()}.
     *
     * @return the segment
     */
    MemorySegment segment();

    /**
     * Publishes the object: from now on it is immutable and visible to {@code get}.
     *
     * @throws IllegalStateException if already sealed or closed
     */
    void seal();

    /**
     * Seals the object, as {@link #seal()}, and lists it in the store's directory
     * ({@link ObjectDirectory}) under {@code name} instead of its id: for an object written under
     * a temporary id that readers on the host know by another name.
     *
     * @param name the id readers look it up by
     * @throws IllegalStateException if already sealed or closed
     */
    void sealListedAs(ObjectId name);

    /** Frees the object if it was not sealed; does nothing after {@link #seal()}. Idempotent. */
    @Override
    void close();
}
