package dev.croupier.objectstore;

/**
 * Root of the object store's typed errors. Messages name the store and the object, file or
 * knob involved.
 *
 * <p>Thread-safety: immutable after construction.
 */
public class ObjectStoreException extends RuntimeException {

    /**
     * Creates an error with a message.
     *
     * @param message what went wrong, naming the store and object or file
     */
    public ObjectStoreException(String message) {
        super(message);
    }

    /**
     * Creates an error with a message and cause.
     *
     * @param message what went wrong, naming the store and object or file
     * @param cause the underlying failure
     */
    public ObjectStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
