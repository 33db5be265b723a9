package dev.croupier.objectstore;

/**
 * The object is not in the store: never created, not sealed yet, or deleted.
 *
 * <p>Thread-safety: immutable after construction.
 */
public class ObjectNotFoundException extends ObjectStoreException {

    private final transient ObjectId id;

    /**
     * Creates the error.
     *
     * @param store the store's name
     * @param id the missing object
     * @param detail why it is missing, for the message
     */
    public ObjectNotFoundException(String store, ObjectId id, String detail) {
        super("object " + id + " not found in store '" + store + "': " + detail);
        this.id = id;
    }

    /**
     * Returns the missing object's id.
     *
     * @return the id
     */
    public ObjectId id() {
        return id;
    }
}
