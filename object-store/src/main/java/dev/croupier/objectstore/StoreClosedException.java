package dev.croupier.objectstore;

/**
 * The store was closed before or during the call. Callers that read a store another thread may
 * close (a node that dies while its neighbours fetch from it) tell this apart from real errors.
 *
 * <p>Thread-safety: immutable after construction.
 */
public final class StoreClosedException extends ObjectStoreException {

    /**
     * Creates the error for store {@code name}.
     *
     * @param name the store's name
     */
    public StoreClosedException(String name) {
        super("store '" + name + "' is closed");
    }
}
