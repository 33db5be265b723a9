package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The owner's entries by id. An owner names its objects {@code (tag, 1), (tag, 2), ...}, so the
 * table is pages of {@value #PAGE_SIZE} slots indexed by the sequence number: a put or remove
 * is a slot write and a per-page count, with no node allocated and no hash of the id (a
 * {@link ConcurrentHashMap} of ids was a third of the owner's time per object when scheduling
 * the 100 TB graph). Ids are made in order and mostly freed in order, so pages fill, empty and
 * are dropped behind the front; an entry that lives long keeps only its own page.
 *
 * <p>Pages are found through {@link #recent}, a ring of the last {@value #RECENT_PAGES} page
 * indexes by default, before the map: a remove comes to a page behind the front (an object is freed after
 * later ones were made), and looking it up in the map (a boxed index and its hash) was a
 * seventh of the owner's samples over the 100 TB graph.
 *
 * <p>A page's count is its entries, or {@link #DROPPED} once it has been emptied after all
 * of its sequence numbers were handed out; a put that finds a dropped page makes a new one.
 * Removal is by identity, so a stale remove cannot take out an entry put again since (a
 * rebuilt one is the same object; it is put again after its removal).
 *
 * <p>Thread-safe; {@link #forEach} and {@link #size} are weakly consistent.
 */
final class EntryTable {

    static final int PAGE_BITS = 12;
    static final int PAGE_SIZE = 1 << PAGE_BITS;
    private static final int DROPPED = -1;
    /** Pages the ring {@link #recent} holds by default: {@value} pages of {@value #PAGE_SIZE} ids. */
    static final int RECENT_PAGES = 1024;

    private final long tag;
    /** Sequence numbers handed out so far: a page below {@code issued >>> PAGE_BITS} is full. */
    private final LongSupplier issued;
    private final ConcurrentHashMap<Long, Page> pages = new ConcurrentHashMap<>();
    /** Page {@code i} at {@code i & recentMask} while it lives (live pages lie near the front), unless a later one took its place. */
    private final AtomicReferenceArray<Page> recent;
    private final int recentMask;
    /** The page most puts go to: the one at the front. */
    private volatile Page front;

    /**
     * @param tag the high half of every id this table holds; others are never found
     * @param issued the highest sequence number handed out so far
     */
    EntryTable(long tag, LongSupplier issued) {
        this(tag, issued, RECENT_PAGES);
    }

    /** As above, with a ring of {@code recentPages} pages, a power of two (tests make pages collide there). */
    EntryTable(long tag, LongSupplier issued, int recentPages) {
        if (Integer.bitCount(recentPages) != 1) {
            throw new IllegalArgumentException("recentPages must be a power of two: " + recentPages);
        }
        this.tag = tag;
        this.issued = issued;
        this.recent = new AtomicReferenceArray<>(recentPages);
        this.recentMask = recentPages - 1;
    }

    private static final class Page {
        final long index;
        final AtomicReferenceArray<OwnedObject> slots = new AtomicReferenceArray<>(PAGE_SIZE);
        final AtomicInteger count = new AtomicInteger();

        Page(long index) {
            this.index = index;
        }

        /** Counts one more entry unless the page was dropped. */
        boolean enter() {
            for (int c = count.get(); c != DROPPED; c = count.get()) {
                if (count.compareAndSet(c, c + 1)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Adds {@code entry} under its id; an entry already under that id must be the same one. */
    void put(OwnedObject entry) {
        long seq = sequenceOf(entry);
        long index = seq >>> PAGE_BITS;
        while (true) {
            Page page = page(index);
            if (page == null) {
                page = newPage(index);
            }
            if (page.enter()) {
                if (!page.slots.compareAndSet(slot(seq), null, entry)) {
                    page.count.decrementAndGet(); // already there: a rebuild of an entry not yet freed
                }
                return;
            }
            pages.remove(index, page); // dropped since it was looked up: make a new one
        }
    }

    private Page newPage(long index) {
        Page made = new Page(index);
        Page prior = pages.putIfAbsent(index, made);
        if (prior != null) {
            return prior;
        }
        recent.set(ring(index), made);
        Page f = front;
        if (f == null || index >= f.index) {
            front = made;
        }
        if (f == null || index > f.index) {
            Page behind = pages.get(index - 1);
            if (behind != null) {
                dropIfDone(behind);
            }
        }
        return made;
    }

    /** The entry under {@code id}, or null. */
    OwnedObject get(ObjectId id) {
        if (id.high() != tag || id.low() <= 0) {
            return null;
        }
        Page page = page(id.low() >>> PAGE_BITS);
        return page == null ? null : page.slots.get(slot(id.low()));
    }

    /** Removes {@code entry} if it is the one under its id. */
    void remove(OwnedObject entry) {
        long seq = sequenceOf(entry);
        Page page = page(seq >>> PAGE_BITS);
        if (page == null || !page.slots.compareAndSet(slot(seq), entry, null)) {
            return;
        }
        if (page.count.decrementAndGet() == 0) {
            dropIfDone(page);
        }
    }

    private void dropIfDone(Page page) {
        if (page.count.get() == 0 && sealed(page) && page.count.compareAndSet(0, DROPPED)) {
            pages.remove(page.index, page);
            recent.compareAndSet(ring(page.index), page, null);
        }
    }

    /** Entries now in the table, counted page by page. */
    int size() {
        long n = 0;
        for (Page page : pages.values()) {
            n += Math.max(0, page.count.get());
        }
        return Math.toIntExact(n);
    }

    void forEach(Consumer<OwnedObject> action) {
        for (Page page : pages.values()) {
            for (int i = 0; i < PAGE_SIZE; i++) {
                OwnedObject e = page.slots.get(i);
                if (e != null) {
                    action.accept(e);
                }
            }
        }
    }

    /** The pages kept, in order: empty pages are dropped once all their ids are handed out. */
    long[] pageIndexes() {
        return pages.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
    }

    void clear() {
        pages.clear();
        for (int i = 0; i < recent.length(); i++) {
            recent.set(i, null);
        }
        front = null;
    }

    /** The live page at {@code index}, or null; a dropped page is never returned. */
    private Page page(long index) {
        Page f = front;
        if (f != null && f.index == index && f.count.get() != DROPPED) {
            return f;
        }
        Page page = recent.get(ring(index));
        if (page != null && page.index == index && page.count.get() != DROPPED) {
            return page;
        }
        page = pages.get(index); // pushed out of the ring, or dropped there and made again
        return page == null || page.count.get() == DROPPED ? null : page;
    }

    private int ring(long index) {
        return (int) (index & recentMask);
    }

    /**
     * Whether every sequence number of the page has been handed out, so that no put of a
     * new id can come to it. An id handed out and never put (a put that failed on the node)
     * leaves its page empty but kept until the page after it is made, which drops it.
     */
    private boolean sealed(Page page) {
        return issued.getAsLong() >= ((page.index + 1) << PAGE_BITS) - 1;
    }

    private long sequenceOf(OwnedObject entry) {
        if (entry.tag != tag || entry.seq <= 0) {
            throw new IllegalArgumentException(entry + " was not made by this owner");
        }
        return entry.seq;
    }

    private static int slot(long seq) {
        return (int) (seq & (PAGE_SIZE - 1));
    }
}
