package dev.croupier.objectstore;

/**
 * One of the store's internal threads (its spill thread or a prefetch thread) died of an
 * unexpected error, so work the store promised will never be done. The store is failed: every
 * call waiting on it (an allocation waiting for memory, a {@code get} waiting for a restore)
 * and every later call throws this, except {@link ObjectStore#metrics()} and
 * {@link ObjectStore#close()}; a prefetch's future fails with it. The cause is the thread's
 * error. Close the store; its objects are lost.
 *
 * <p>Thread-safety: immutable after construction.
 */
public final class StoreFailedException extends ObjectStoreException {

    private final String thread;

    /**
     * Creates the error.
     *
     * @param store the store's name
     * @param thread the name of the thread that died
     * @param cause what the thread died of
     */
    public StoreFailedException(String store, String thread, Throwable cause) {
        super("store '" + store + "' failed: its thread '" + thread + "' died of " + cause
                + "; close the store", cause);
        this.thread = thread;
    }

    /**
     * Returns the name of the internal thread that died.
     *
     * @return the thread's name
     */
    public String thread() {
        return thread;
    }
}
