package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store's state machine: object table, LRU of spillable objects, allocation queue.
 *
 * <p>Design note: one lock guards all state (the conventions' "one lock per shared structure";
 * it is taken once per object operation, never per record). Byte copies and disk I/O happen
 * outside the lock. Allocation follows Ray's object manager: a request that does not fit waits
 * in a priority queue (task outputs before prefetches, FIFO within a priority; only the head
 * may allocate, so a big request is not starved by small ones) while spilling frees memory; when
 * nothing can be spilled and nothing is being spilled, a task output falls back to a file on
 * disk so the job keeps going, and a prefetch gives up.
 *
 * <p>Thread-safety: thread-safe; every method takes the lock.
 */
final class StoreEngine {

    private static final MemorySegment EMPTY = MemorySegment.ofArray(new byte[0]);

    private final String name;
    private final StoreDirectories dirs;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever memory is freed, an object changes state, or the queue head changes. */
    private final Condition changed = lock.newCondition();

    private final Map<ObjectId, ObjectEntry> table = new HashMap<>();
    /** Every entry not yet freed, including deleted ones still pinned; for metrics and close. */
    private final Set<ObjectEntry> live = new LinkedHashSet<>();
    /** Spillable entries, least recently used first. */
    private final LinkedHashSet<ObjectEntry> lru = new LinkedHashSet<>();
    private final PriorityQueue<AllocationRequest> queue = new PriorityQueue<>();
    private long requestSeq;
    private long fallbackSeq;
    private boolean closed;

    private long bytesInMemory;
    private long bytesFallback;

    private record AllocationRequest(Priority priority, long seq, long size) implements Comparable<AllocationRequest> {
        @Override
        public int compareTo(AllocationRequest o) {
            int c = priority.compareTo(o.priority);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    StoreEngine(String name, StoreDirectories dirs, MemoryRegion region) {
        this.name = name;
        this.dirs = dirs;
        this.region = region;
        this.allocator = region.allocator();
    }

    String name() {
        return name;
    }

    WritableObject create(ObjectId id, long size, Priority priority) throws InterruptedException {
        ObjectEntry entry = new ObjectEntry(id, size);
        lock.lock();
        try {
            checkOpen();
            if (table.containsKey(id)) {
                throw new ObjectExistsException(name, id);
            }
            table.put(id, entry);
            live.add(entry);
            if (size > 0) {
                try {
                    place(entry, priority);
                } catch (InterruptedException | RuntimeException e) {
                    table.remove(id, entry);
                    live.remove(entry);
                    entry.freed = true;
                    throw e;
                }
            }
            return new Writable(entry, segmentOf(entry));
        } finally {
            lock.unlock();
        }
    }

    /** Finds room for a new object's bytes: region memory, else a fallback file. Called locked. */
    private void place(ObjectEntry entry, Priority priority) throws InterruptedException {
        long offset = allocateInRegion(entry.size, priority);
        if (offset >= 0) {
            entry.offset = offset;
            bytesInMemory += entry.size;
        } else {
            entry.fallback = newFallback(entry);
            bytesFallback += entry.size;
        }
    }

    /**
     * Waits in the allocation queue for a region block. Returns its offset, or -1 if no block
     * can be had without waiting forever (fall back). Called locked.
     */
    private long allocateInRegion(long size, Priority priority) throws InterruptedException {
        if (FreeListAllocator.blockSize(size) > allocator.capacity()) {
            return -1;
        }
        AllocationRequest request = new AllocationRequest(priority, requestSeq++, size);
        queue.add(request);
        try {
            while (true) {
                checkOpen();
                if (queue.peek() == request) {
                    long offset = allocator.allocate(size);
                    if (offset >= 0) {
                        return offset;
                    }
                    if (!spillCanMakeRoom()) {
                        return -1;
                    }
                }
                changed.await();
            }
        } finally {
            queue.remove(request);
            changed.signalAll();
        }
    }

    /** True if waiting can free region memory: spillable objects exist or a spill is running. */
    private boolean spillCanMakeRoom() {
        return false;
    }

    private FallbackFile newFallback(ObjectEntry entry) {
        Path file = dirs.spillDir().resolve("fallback-" + entry.id + "-" + (fallbackSeq++) + ".obj");
        try {
            return new FallbackFile(file, entry.size);
        } catch (IOException e) {
            throw new SpillFailedException(name, dirs.spillDir(), entry.size, e);
        }
    }

    private MemorySegment segmentOf(ObjectEntry entry) {
        if (entry.size == 0) {
            return EMPTY;
        }
        if (entry.offset >= 0) {
            return region.slice(entry.offset, entry.size);
        }
        return entry.fallback.segment();
    }

    PinnedObject get(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            entry.pins++;
            lru.remove(entry);
            return new Pinned(entry, segmentOf(entry).asReadOnly());
        } finally {
            lock.unlock();
        }
    }

    boolean contains(ObjectId id) {
        lock.lock();
        try {
            ObjectEntry entry = table.get(id);
            return !closed && entry != null && entry.sealed;
        } finally {
            lock.unlock();
        }
    }

    long sizeOf(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            return sealedEntry(id).size;
        } finally {
            lock.unlock();
        }
    }

    ObjectLocation describe(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.offset >= 0) {
                return new ObjectLocation(region.file(), entry.offset, entry.size);
            }
            if (entry.fallback != null) {
                return new ObjectLocation(entry.fallback.file(), 0, entry.size);
            }
            return new ObjectLocation(region.file(), 0, 0);
        } finally {
            lock.unlock();
        }
    }

    boolean delete(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = table.remove(id);
            if (entry == null) {
                return false;
            }
            entry.deleted = true;
            if (entry.sealed && entry.pins == 0) {
                free(entry);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    private ObjectEntry sealedEntry(ObjectId id) {
        ObjectEntry entry = table.get(id);
        if (entry == null) {
            throw new ObjectNotFoundException(name, id, "no such object (never created or deleted)");
        }
        if (!entry.sealed) {
            throw new ObjectNotFoundException(name, id, "the object is being written and not sealed yet");
        }
        return entry;
    }

    /** Releases the entry's memory, fallback file and spill copy. Called locked. */
    private void free(ObjectEntry entry) {
        if (entry.freed) {
            return;
        }
        entry.freed = true;
        lru.remove(entry);
        live.remove(entry);
        if (entry.offset >= 0) {
            allocator.free(entry.offset, entry.size);
            bytesInMemory -= entry.size;
            entry.offset = -1;
        }
        if (entry.fallback != null) {
            entry.fallback.close();
            bytesFallback -= entry.size;
            entry.fallback = null;
        }
        changed.signalAll();
    }

    private void seal(ObjectEntry entry) {
        lock.lock();
        try {
            checkOpen();
            entry.sealed = true;
            if (entry.deleted) {
                free(entry);
            } else if (entry.spillable()) {
                lru.add(entry);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void abort(ObjectEntry entry) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            table.remove(entry.id, entry);
            free(entry);
        } finally {
            lock.unlock();
        }
    }

    private void unpin(ObjectEntry entry) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            entry.pins--;
            if (entry.pins == 0) {
                if (entry.deleted) {
                    free(entry);
                } else if (entry.spillable()) {
                    lru.add(entry);
                    changed.signalAll();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    StoreMetrics metrics() {
        lock.lock();
        try {
            long pinnedBytes = 0;
            int unsealed = 0;
            int inMemory = 0;
            int fallback = 0;
            int pinned = 0;
            for (ObjectEntry e : live) {
                if (!e.sealed) {
                    unsealed++;
                }
                if (e.pins > 0 || !e.sealed) {
                    pinnedBytes += e.size;
                }
                if (e.pins > 0) {
                    pinned++;
                }
                if (e.sealed && e.offset >= 0) {
                    inMemory++;
                }
                if (e.fallback != null) {
                    fallback++;
                }
            }
            return new StoreMetrics(allocator.capacity(), bytesInMemory, allocator.used(), pinnedBytes,
                    0, bytesFallback, 0, 0, 0,
                    unsealed, inMemory, 0, fallback, pinned, queue.size(), 0, 0, 0, 0);
        } finally {
            lock.unlock();
        }
    }

    void close() {
        List<ObjectEntry> all;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            changed.signalAll();
            all = new ArrayList<>(live);
            for (ObjectEntry entry : all) {
                free(entry);
            }
            table.clear();
        } finally {
            lock.unlock();
        }
        try {
            region.close();
        } finally {
            dirs.close();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new ObjectStoreException("store '" + name + "' is closed");
        }
    }

    /** The writer's handle on an unsealed object. */
    private final class Writable implements WritableObject {
        private final ObjectEntry entry;
        private final MemorySegment segment;
        private boolean done;

        Writable(ObjectEntry entry, MemorySegment segment) {
            this.entry = entry;
            this.segment = segment;
        }

        @Override
        public ObjectId id() {
            return entry.id;
        }

        @Override
        public MemorySegment segment() {
            return segment;
        }

        @Override
        public synchronized void seal() {
            if (done) {
                throw new IllegalStateException("object " + entry.id + " in store '" + name
                        + "' is already sealed or closed");
            }
            done = true;
            StoreEngine.this.seal(entry);
        }

        @Override
        public synchronized void close() {
            if (!done) {
                done = true;
                abort(entry);
            }
        }
    }

    /** A reader's pin on a sealed object. */
    private final class Pinned implements PinnedObject {
        private final ObjectEntry entry;
        private final MemorySegment view;
        private boolean released;

        Pinned(ObjectEntry entry, MemorySegment view) {
            this.entry = entry;
            this.view = view;
        }

        @Override
        public ObjectId id() {
            return entry.id;
        }

        @Override
        public MemorySegment segment() {
            return view;
        }

        @Override
        public long size() {
            return entry.size;
        }

        @Override
        public synchronized void close() {
            if (!released) {
                released = true;
                unpin(entry);
            }
        }
    }
}
