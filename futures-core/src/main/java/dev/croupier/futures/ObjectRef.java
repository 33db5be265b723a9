package dev.croupier.futures;

import dev.croupier.objectstore.ObjectId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A future of an immutable value kept in the cluster's object stores.
 *
 * <p>Passing a ref as a task argument makes it a dependency: the task runs once the value is
 * ready, on a node chosen with the value's location in mind, and receives the value itself.
 * The value stays alive while a ref to it is alive or a pending task needs it; release refs
 * you are done with ({@link #release()}, or try-with-resources) so memory is freed at once
 * rather than when the garbage collector finds the ref.
 *
 * <p>A {@link java.lang.foreign.MemorySegment} value is a read-only view over the store's
 * memory, valid until this ref is released. Thread-safe.
 */
public interface ObjectRef<T> extends AutoCloseable {

    /** The object's id, unique in its cluster. */
    ObjectId id();

    /**
     * Waits for the value and returns it. Throws the task's failure, cancellation or loss, and
     * {@link IllegalStateException} on a released ref, also when another thread releases it
     * while this waits.
     */
    T get();

    /** Like {@link #get()}, throwing {@link GetTimeoutException} after {@code timeout}. */
    T get(Duration timeout);

    /**
     * Whether the value is ready, or its task has failed or been cancelled. May be asked after
     * {@link #release()}: false once the object has been freed.
     */
    boolean isDone();

    /**
     * Encoded size of the value in bytes once it is ready (0 if its task failed), or -1 before.
     * May be asked after {@link #release()}: the size stays known once the object is freed, but
     * is -1 for one freed before it was made. A task's outputs are marked done in order, and
     * their waiters run once all are: once its last output is done, every one is, and a
     * {@link #whenDone()} callback registered on any while the task ran finds its siblings'
     * sizes.
     */
    long byteSize();

    /**
     * A future completed with this ref once the value is ready or has failed, without fetching
     * the value (for bookkeeping on large objects). If this ref is released before then, and
     * no task reads the value, the value is not made: the future then fails with
     * {@link ErrorCode#CANCELLED}.
     */
    CompletableFuture<ObjectRef<T>> whenDone();

    /**
     * A future completed with the value (or the failure) once it is known; failed as
     * {@link #get()} fails on a released ref if this ref is released before then and the value
     * is not made (see {@link #whenDone()}).
     */
    CompletableFuture<T> toCompletableFuture();

    /** Drops this ref's claim on the value; idempotent. The ref must not be used afterwards. */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }

    /**
     * Wraps refs as one task argument that arrives as the {@code List} of their values, every
     * ref a dependency. This is how a reducer takes one block from each of many mappers.
     */
    static <T> RefList<T> all(List<? extends ObjectRef<T>> refs) {
        return new RefList<>(List.copyOf(refs));
    }
}
