package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.stateful.Action;
import net.jqwik.api.stateful.ActionSequence;

/**
 * Stateful differential property: random sequences of create, seal, abort, get, pin, release,
 * delete and prefetch on a 512 KiB store that spills, against a map of the sealed objects. Every
 * read returns exactly the bytes written, memory never exceeds the capacity, and at the end no
 * memory and no files remain.
 */
class StoreModelProperties {

    private static final long CAPACITY = 512 << 10;
    private static final int MAX_OBJECT = 200 << 10;

    /** The store, the model and the handles a test holds between actions. */
    static final class Subject {
        final ObjectStore store;
        final Map<ObjectId, long[]> sealed = new HashMap<>(); // id -> {seed, size}
        final List<ObjectId> order = new ArrayList<>();
        final List<WritableObject> writers = new ArrayList<>();
        final List<long[]> writerSeeds = new ArrayList<>();
        final List<PinnedObject> pins = new ArrayList<>();
        final List<Long> pinSeeds = new ArrayList<>();
        long nextSeed;

        Subject(ObjectStore store) {
            this.store = store;
        }

        ObjectId pick(int index) {
            return order.isEmpty() ? null : order.get(Math.floorMod(index, order.size()));
        }

        void checkInvariants() {
            StoreMetrics m = store.metrics();
            assertTrue(m.bytesAllocated() <= m.capacityBytes(), m.toString());
            assertTrue(m.bytesInMemory() <= m.bytesAllocated(), m.toString());
            assertTrue(m.bytesOnDisk() >= 0 && m.bytesFallback() >= 0 && m.bytesPinned() >= 0, m.toString());
            for (Map.Entry<ObjectId, long[]> e : sealed.entrySet()) {
                assertTrue(store.contains(e.getKey()), "lost " + e.getKey() + ": " + m);
                assertEquals(e.getValue()[1], store.sizeOf(e.getKey()));
            }
            assertEquals(order.size(), sealed.size());
        }
    }

    @Property(tries = 60)
    void storeBehavesLikeAMapOfImmutableObjects(@ForAll("actions") ActionSequence<Subject> actions,
                                                @ForAll Compression compression,
                                                @ForAll boolean sharedMemory) throws Exception {
        Path dir = Files.createTempDirectory("store-model");
        try {
            Subject subject;
            try (ObjectStore store = ObjectStore.builder().name("model").capacityBytes(CAPACITY)
                    .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(ObjectStore.MIN_SPILL_FILE_BYTES)
                    .compression(compression).sharedMemory(sharedMemory).build()) {
                subject = actions.withInvariant(Subject::checkInvariants).run(new Subject(store));
                StoreMetrics seen = store.metrics();
                Statistics.label("spilled").collect(seen.bytesSpilled() > 0);
                Statistics.label("restored").collect(seen.bytesRestored() > 0);
                Statistics.label("objects written").collect(subject.nextSeed / 10 * 10);
                Statistics.label("fallback").collect(seen.objectsFallback() > 0);
                for (int i = 0; i < subject.pins.size(); i++) {
                    assertEquals(-1, TestStores.firstMismatch(subject.pins.get(i).segment(), subject.pinSeeds.get(i)));
                    subject.pins.get(i).close();
                }
                for (WritableObject w : subject.writers) {
                    w.close();
                }
                for (ObjectId id : subject.order) {
                    try (PinnedObject pinned = store.get(id)) {
                        assertEquals(-1, TestStores.firstMismatch(pinned.segment(), subject.sealed.get(id)[0]));
                    }
                    assertTrue(store.delete(id));
                }
                store.awaitSpillIdle();
                // A prefetch pins its objects when it is queued and unpins them once read, on the
                // store's own threads: one queued by an earlier action may still be running.
                long settle = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                while (store.metrics().objectsPinned() > 0 && System.nanoTime() < settle) {
                    Thread.sleep(5);
                }
                StoreMetrics m = store.metrics();
                assertEquals(0, m.bytesInMemory(), m.toString());
                assertEquals(0, m.bytesAllocated(), m.toString());
                assertEquals(0, m.bytesOnDisk(), m.toString());
                assertEquals(0, m.bytesFallback(), m.toString());
                assertEquals(0, m.objectsPinned(), m.toString());
            }
            assertEquals(0, TestStores.countFiles(dir), "files left after close");
        } finally {
            deleteTree(dir);
        }
    }

    @Provide
    Arbitrary<ActionSequence<Subject>> actions() {
        Arbitrary<Integer> index = Arbitraries.integers().between(0, 1000);
        Arbitrary<Integer> size = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.just(0)),
                net.jqwik.api.Tuple.of(4, Arbitraries.integers().between(1, 4096)),
                net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(4097, MAX_OBJECT)
                        .withDistribution(net.jqwik.api.RandomDistribution.uniform())));
        return Arbitraries.sequences(Arbitraries.oneOf(
                Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(10, size.map(Put::new)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.of(Priority.values()).flatMap(p -> size.map(s -> new Create(s, p)))),
                        net.jqwik.api.Tuple.of(2, index.map(Seal::new)),
                        net.jqwik.api.Tuple.of(1, index.map(Abort::new)),
                        net.jqwik.api.Tuple.of(4, index.map(Get::new)),
                        net.jqwik.api.Tuple.of(2, index.map(Pin::new)),
                        net.jqwik.api.Tuple.of(2, index.map(Release::new)),
                        net.jqwik.api.Tuple.of(3, index.map(Delete::new)),
                        net.jqwik.api.Tuple.of(2, index.list().ofMaxSize(4).map(Prefetch::new))))).ofSize(40);
    }

    record Put(int size) implements Action<Subject> {
        @Override
        public Subject run(Subject s) {
            ObjectId id = TestStores.freshId();
            long seed = s.nextSeed++;
            try (WritableObject w = s.store.create(id, size)) {
                TestStores.fill(w.segment(), seed);
                w.seal();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            s.sealed.put(id, new long[] {seed, size});
            s.order.add(id);
            return s;
        }
    }

    record Create(int size, Priority priority) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return s.writers.size() < 3;
        }

        @Override
        public Subject run(Subject s) {
            ObjectId id = TestStores.freshId();
            long seed = s.nextSeed++;
            try {
                WritableObject w = s.store.create(id, size, priority);
                TestStores.fill(w.segment(), seed);
                s.writers.add(w);
                s.writerSeeds.add(new long[] {seed, size});
                assertFalse(s.store.contains(id), "unsealed objects are invisible");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return s;
        }
    }

    record Seal(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.writers.isEmpty();
        }

        @Override
        public Subject run(Subject s) {
            int i = Math.floorMod(index, s.writers.size());
            WritableObject w = s.writers.remove(i);
            long[] seedAndSize = s.writerSeeds.remove(i);
            w.seal();
            w.close();
            s.sealed.put(w.id(), seedAndSize);
            s.order.add(w.id());
            return s;
        }
    }

    record Abort(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.writers.isEmpty();
        }

        @Override
        public Subject run(Subject s) {
            int i = Math.floorMod(index, s.writers.size());
            WritableObject w = s.writers.remove(i);
            s.writerSeeds.remove(i);
            w.close();
            assertFalse(s.store.contains(w.id()));
            return s;
        }
    }

    record Get(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.order.isEmpty();
        }

        @Override
        public Subject run(Subject s) {
            ObjectId id = s.pick(index);
            long[] expected = s.sealed.get(id);
            try (PinnedObject pinned = s.store.get(id)) {
                assertEquals(expected[1], pinned.size());
                assertEquals(-1, TestStores.firstMismatch(pinned.segment(), expected[0]), "object " + id);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return s;
        }
    }

    record Pin(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.order.isEmpty() && s.pins.size() < 4;
        }

        @Override
        public Subject run(Subject s) {
            ObjectId id = s.pick(index);
            try {
                s.pins.add(s.store.get(id));
                s.pinSeeds.add(s.sealed.get(id)[0]);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return s;
        }
    }

    record Release(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.pins.isEmpty();
        }

        @Override
        public Subject run(Subject s) {
            int i = Math.floorMod(index, s.pins.size());
            PinnedObject pinned = s.pins.remove(i);
            long seed = s.pinSeeds.remove(i);
            assertEquals(-1, TestStores.firstMismatch(pinned.segment(), seed), "pinned view changed");
            pinned.close();
            return s;
        }
    }

    record Delete(int index) implements Action<Subject> {
        @Override
        public boolean precondition(Subject s) {
            return !s.order.isEmpty();
        }

        @Override
        public Subject run(Subject s) {
            ObjectId id = s.pick(index);
            assertTrue(s.store.delete(id));
            assertFalse(s.store.delete(id));
            s.sealed.remove(id);
            s.order.remove(id);
            assertFalse(s.store.contains(id));
            return s;
        }
    }

    record Prefetch(List<Integer> indexes) implements Action<Subject> {
        @Override
        public Subject run(Subject s) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i : indexes) {
                ObjectId id = s.pick(i);
                ids.add(id != null ? id : TestStores.freshId());
            }
            try {
                s.store.prefetch(ids).get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return s;
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
