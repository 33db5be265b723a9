package dev.croupier.objectstore;

/**
 * The store's record of one object. All fields are guarded by the store's lock.
 *
 * <p>Design note: an object's bytes live in at most one of three places that count as
 * resident (the memory region at {@link #offset}, a {@link #fallback} file, or nowhere for a
 * zero-size object), and may additionally have a copy in a spill file ({@link #spill}). A
 * spilled object has only the spill copy. Keeping the spill copy after a restore lets the
 * store free the object again later without rewriting it. The state diagram is drawn in
 * {@code docs/object-store.md}.
 *
 * <p>Thread-safety: not thread-safe; guarded by the store's lock.
 */
final class ObjectEntry {

    final ObjectId id;
    final long size;

    /** Region offset of the bytes, or -1 when not in the region. */
    long offset = -1;
    /** The fallback file holding the bytes, or null. */
    FallbackFile fallback;
    /** The spill copy, or null. */
    SpillRecord spill;

    boolean sealed;
    /** Removed from the table by delete; freed when the last pin goes. */
    boolean deleted;
    /** Freed: memory, fallback file and spill copy released. */
    boolean freed;
    /** Reader pins; the writer of an unsealed object does not count here. */
    int pins;
    /** A spill writer is copying the bytes to disk right now. */
    boolean spilling;
    /** A restore of this object is in flight; waiters block on the store's condition. */
    boolean restoring;
    /** Restored by a prefetch and not read since; other prefetches do not evict it. */
    boolean prefetched;
    /** Tick of the last seal or unpin; orders eviction. Changed only while on no idle list. */
    long lastUse;
    /** The name the store's directory lists the object under, when not its id. */
    ObjectId listedAs;
    /** Its slot in the store's directory while listed there, else -1. */
    int listedSlot = -1;

    ObjectEntry(ObjectId id, long size) {
        this.id = id;
        this.size = size;
    }

    /** True if the bytes can be read without a restore. */
    boolean resident() {
        return offset >= 0 || fallback != null || size == 0;
    }

}
