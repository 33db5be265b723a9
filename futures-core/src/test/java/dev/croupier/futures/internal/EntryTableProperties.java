package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.objectstore.ObjectId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The owner's id table against a map: every id finds what was put under it and not removed
 * since, across pages made, emptied, dropped and made again by a rebuild's put; and an empty
 * page is kept only while ids of the page after it may still come (none was ever put there).
 * Rings of recent pages as small as one page make pages take each other's place there.
 */
class EntryTableProperties {

    private static final long TAG = 0x5eed;

    /** SKIP hands out ids that are never put (a put that failed on its node); SKIP_PAGE, the rest of a page's. */
    enum Kind { NEW, SKIP, SKIP_PAGE, REMOVE, REPUT, PUT_AGAIN, STALE_REMOVE }

    record Op(Kind kind, int arg) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                Tuple.of(40, Arbitraries.just(new Op(Kind.NEW, 0))),
                Tuple.of(2, Arbitraries.integers().between(1, 3 * EntryTable.PAGE_SIZE).map(n -> new Op(Kind.SKIP, n))),
                Tuple.of(2, Arbitraries.just(new Op(Kind.SKIP_PAGE, 0))),
                Tuple.of(30, Arbitraries.integers().between(0, 1 << 20).map(n -> new Op(Kind.REMOVE, n))),
                Tuple.of(5, Arbitraries.integers().between(0, 1 << 20).map(n -> new Op(Kind.REPUT, n))),
                Tuple.of(3, Arbitraries.integers().between(0, 1 << 20).map(n -> new Op(Kind.PUT_AGAIN, n))),
                Tuple.of(3, Arbitraries.integers().between(0, 1 << 20).map(n -> new Op(Kind.STALE_REMOVE, n))));
        Arbitrary<List<Op>> burst = Combinators.combine(Arbitraries.integers().between(0, 2 * EntryTable.PAGE_SIZE),
                Arbitraries.integers().between(0, 100)).as((n, removePercent) -> {
                    List<Op> ops = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        ops.add(new Op(Kind.NEW, 0));
                        if (i % 100 < removePercent) {
                            ops.add(new Op(Kind.REMOVE, i));
                        }
                    }
                    return ops;
                });
        // Bursts cross page boundaries; single ops mix everything in between.
        return Arbitraries.oneOf(op.list().ofMaxSize(400), burst).list().ofMaxSize(8)
                .map(parts -> parts.stream().flatMap(List::stream).toList());
    }

    @Provide
    Arbitrary<Integer> rings() {
        return Arbitraries.of(1, 2, EntryTable.RECENT_PAGES);
    }

    @Property(tries = 200)
    void findsWhatWasPutAndKeepsNoEmptyPageBehind(@ForAll("ops") List<Op> ops, @ForAll boolean drain,
                                                   @ForAll("rings") int recentPages) {
        AtomicLong issued = new AtomicLong();
        EntryTable table = new EntryTable(TAG, issued::get, recentPages);
        Map<Long, OwnedObject> live = new HashMap<>();
        List<OwnedObject> liveOrder = new ArrayList<>();
        List<OwnedObject> removed = new ArrayList<>();
        Set<Long> pagesPut = new HashSet<>();
        for (Op op : ops) {
            switch (op.kind()) {
                case NEW -> {
                    OwnedObject e = new OwnedObject(new ObjectId(TAG, issued.incrementAndGet()), null, 0);
                    table.put(e);
                    live.put(e.seq, e);
                    liveOrder.add(e);
                    pagesPut.add(e.seq >>> EntryTable.PAGE_BITS);
                }
                case SKIP -> issued.addAndGet(op.arg());
                case SKIP_PAGE -> issued.set(issued.get() | (EntryTable.PAGE_SIZE - 1));
                case REMOVE -> {
                    if (!liveOrder.isEmpty()) {
                        OwnedObject e = liveOrder.remove(op.arg() % liveOrder.size());
                        table.remove(e);
                        live.remove(e.seq);
                        removed.add(e);
                    }
                }
                case REPUT -> {
                    if (!removed.isEmpty()) {
                        OwnedObject e = removed.remove(op.arg() % removed.size());
                        table.put(e);
                        live.put(e.seq, e);
                        liveOrder.add(e);
                    }
                }
                case PUT_AGAIN -> {
                    if (!liveOrder.isEmpty()) {
                        table.put(liveOrder.get(op.arg() % liveOrder.size()));
                    }
                }
                case STALE_REMOVE -> {
                    if (!removed.isEmpty()) {
                        table.remove(removed.get(op.arg() % removed.size()));
                    }
                }
            }
        }
        if (drain) {
            for (OwnedObject e : liveOrder) {
                table.remove(e);
            }
            live.clear();
            liveOrder.clear();
        }
        for (long seq = 0; seq <= issued.get() + 1; seq++) {
            assertSame(live.get(seq), table.get(new ObjectId(TAG, seq)), "id " + seq);
        }
        if (issued.get() > 0) {
            assertNull(table.get(new ObjectId(TAG + 1, 1)), "another owner's id");
        }
        assertEquals(live.size(), table.size(), "size");
        IdentityHashMap<OwnedObject, Boolean> seen = new IdentityHashMap<>();
        table.forEach(e -> assertNull(seen.put(e, Boolean.TRUE), "visited twice: " + e));
        assertEquals(live.size(), seen.size(), "entries visited");
        live.values().forEach(e -> assertTrue(seen.containsKey(e), "not visited: " + e));
        Set<Long> livePages = new HashSet<>();
        live.keySet().forEach(seq -> livePages.add(seq >>> EntryTable.PAGE_BITS));
        for (long page : table.pageIndexes()) {
            assertTrue(livePages.contains(page) || !pagesPut.contains(page + 1),
                    "page " + page + " is empty and kept though ids of the page after it were put");
        }
    }

    /** Threads putting, removing and putting again their own entries, ids drawn from one counter. */
    @Example
    void concurrentPutsAndRemovesLoseNothing() throws InterruptedException {
        AtomicLong issued = new AtomicLong();
        EntryTable table = new EntryTable(TAG, issued::get, 2);
        int threads = 4;
        int perThread = 20 * EntryTable.PAGE_SIZE;
        List<List<OwnedObject>> kept = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<OwnedObject> mine = new ArrayList<>();
            kept.add(mine);
            workers.add(Thread.ofPlatform().start(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                List<OwnedObject> window = new ArrayList<>();
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    OwnedObject e = new OwnedObject(new ObjectId(TAG, issued.incrementAndGet()), null, 0);
                    table.put(e);
                    window.add(e);
                    if (window.size() > 64) {
                        OwnedObject gone = window.remove(random.nextInt(window.size()));
                        table.remove(gone);
                        if (random.nextInt(50) == 0) {
                            table.put(gone); // a rebuild, maybe into a page dropped meanwhile
                            mine.add(gone);
                        }
                    }
                }
                mine.addAll(window);
            }));
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        int expected = 0;
        for (List<OwnedObject> mine : kept) {
            for (OwnedObject e : mine) {
                assertSame(e, table.get(e.id()), "lost " + e.id());
            }
            expected += mine.size();
        }
        assertEquals(expected, table.size(), "size");
        for (List<OwnedObject> mine : kept) {
            mine.forEach(table::remove);
        }
        assertEquals(0, table.size(), "size once all are removed");
        assertTrue(table.pageIndexes().length <= 1, "pages kept once all are removed: " + table.pageIndexes().length);
    }
}
