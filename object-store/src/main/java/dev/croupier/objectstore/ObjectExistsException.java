package dev.croupier.objectstore;

/**
 * {@code create} was called with the id of an object that is still in the store.
 *
 * <p>Thread-safety: immutable after construction.
 */
public class ObjectExistsException extends ObjectStoreException {

    /**
     * Creates the error.
     *
     * @param store the store's name
     * @param id the id already in use
     */
    public ObjectExistsException(String store, ObjectId id) {
        super("object " + id + " already exists in store '" + store + "'; delete it before creating it again");
    }
}
