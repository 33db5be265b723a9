package dev.croupier.objectstore;

/**
 * Test seam: lets a test make one of the store's internal threads throw at a fixed point, to
 * check that a thread that dies fails the store instead of leaving its waiters waiting forever.
 * Production stores use {@link #NONE}.
 *
 * <p>Thread-safety: called from the store's internal threads, outside the store's lock;
 * implementations must be thread-safe.
 */
@FunctionalInterface
interface FaultHook {

    /** The hook of production stores: does nothing. */
    FaultHook NONE = site -> { };

    /** Where an internal thread calls the hook. */
    enum Site {
        /** The spill thread, at the top of each round of its loop (the first as it starts). */
        SPILL_THREAD,
        /** A prefetch thread, as it starts restoring a run of raw objects already marked restoring. */
        PREFETCH_RUN,
        /** A prefetch thread, as it starts restoring one compressed object. */
        PREFETCH_ONE
    }

    /**
     * Called by an internal thread at {@code site}; throws to simulate the thread dying there.
     *
     * @param site where the thread is
     */
    void at(Site site);
}
