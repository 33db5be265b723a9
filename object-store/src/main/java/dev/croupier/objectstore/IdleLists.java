package dev.croupier.objectstore;

import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The two lists of idle objects (resident, sealed, unpinned, and neither spilling nor
 * restoring): the LRU list of those without a spill copy, which the spill thread writes out,
 * and the evictable list of those with one, whose memory an allocation may take at once. Owns
 * both lists and the byte count of the evictable one; an entry is on at most one list.
 *
 * <p>Thread-safety: not thread-safe; guarded by the engine's lock, which every method asserts
 * is held.
 */
final class IdleLists {

    private final StoreEngine engine;
    private final ReentrantLock lock;

    /** Resident, sealed, unpinned objects without a spill copy: spill candidates, LRU first. */
    private final LinkedHashSet<ObjectEntry> lru = new LinkedHashSet<>();
    /**
     * Resident, sealed, unpinned objects with a spill copy: free to evict, least recently used
     * first. Ordered by {@link ObjectEntry#lastUse} rather than insertion, because objects enter
     * this set when their spill write ends, which says nothing about when they were last used.
     */
    private final TreeSet<ObjectEntry> evictable =
            new TreeSet<>(Comparator.comparingLong((ObjectEntry e) -> e.lastUse));
    private long evictableBytes;

    IdleLists(StoreEngine engine) {
        this.engine = engine;
        this.lock = engine.lock;
    }

    /** Puts an unpinned, sealed, live entry on the list it belongs to. */
    void makeIdle(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (entry.offset < 0 || entry.pins > 0 || entry.spilling || entry.restoring || !entry.sealed) {
            return;
        }
        if (entry.spill != null) {
            evictable.add(entry);
            evictableBytes += entry.size;
        } else {
            lru.add(entry);
            engine.spiller.wakeIfWanted();
        }
        engine.changed.signalAll();
    }

    /** Takes an entry off the idle lists (it is being pinned, spilled or freed). */
    void makeBusy(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (lru.remove(entry) && lru.isEmpty() && engine.allocations.waiting()) {
            // A waiting allocation may have counted on this entry being spilled. With nothing
            // left to spill it must fall back instead; tell it, since the spill thread, which
            // now finds no work, will not.
            engine.changed.signalAll();
        }
        if (evictable.remove(entry)) {
            evictableBytes -= entry.size;
        }
    }

    /** True if some idle object has no spill copy yet. */
    boolean hasSpillCandidates() {
        assert lock.isHeldByCurrentThread();
        return !lru.isEmpty();
    }

    /** Bytes of the idle objects that have a spill copy. */
    long evictableBytes() {
        assert lock.isHeldByCurrentThread();
        return evictableBytes;
    }

    /**
     * Adds spill candidates to {@code batch}, least recently used first, until they hold at
     * least {@code targetBytes} or the batch has {@code maxObjects}; they stay on the list.
     *
     * @return the bytes added
     */
    long leastRecentlyUsed(long targetBytes, int maxObjects, List<ObjectEntry> batch) {
        assert lock.isHeldByCurrentThread();
        long bytes = 0;
        Iterator<ObjectEntry> it = lru.iterator();
        while (it.hasNext() && bytes < targetBytes && batch.size() < maxObjects) {
            ObjectEntry entry = it.next();
            batch.add(entry);
            bytes += entry.size;
        }
        return bytes;
    }

    /**
     * Returns the least recently used evictable entry, or null. A prefetch never evicts another
     * prefetched object that no task has read yet, so prefetches do not undo each other (Ray
     * prefetches into spare memory only); task outputs may evict anything evictable.
     */
    ObjectEntry evictionVictim(Priority priority) {
        assert lock.isHeldByCurrentThread();
        for (ObjectEntry entry : evictable) {
            if (priority == Priority.TASK_OUTPUT || !entry.prefetched) {
                return entry;
            }
        }
        return null;
    }
}
