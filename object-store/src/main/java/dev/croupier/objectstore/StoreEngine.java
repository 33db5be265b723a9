package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store's state machine: the lock, the object table, the store's life (open, closed,
 * failed, I/O in flight), and the calls {@link ObjectStore} makes, run on its parts.
 *
 * <p>Design note: one lock guards all state (taken once per object operation, never per
 * record); byte copies and disk I/O happen outside it. Allocation follows Ray's object manager
 * as the Exoshuffle paper describes it: a request that does not fit waits in a priority queue
 * (task outputs before prefetches, FIFO within a priority; only the head allocates, so a big
 * request is not starved) while the spill thread writes least recently used unpinned objects
 * to fused files. Spilling also starts ahead of need once more than
 * {@link Spiller#SPILL_THRESHOLD} of memory holds objects without a spill copy; such objects
 * keep their memory until an allocation needs it, then are evicted at once (their copy is on
 * disk). When nothing can be
 * spilled, a task output falls back to a file on disk so the job keeps going, and a prefetch
 * gives up. Spilled objects are restored by {@code get} on the caller's thread, or by the
 * prefetch pool at low priority.
 *
 * <p>Callers wait on the internal threads (for memory the spill thread frees, for restores a
 * prefetch thread started), so a thread that dies of an unexpected error must not leave them
 * waiting: it fails the store ({@link #fail}), which wakes every waiter to throw a
 * {@link StoreFailedException} carrying the error, as does every later call.
 *
 * <p>The engine is split along its seams into parts that share its one lock and its
 * {@link #changed} condition rather than having locks of their own, since the allocation, spill
 * and restore paths share one set of invariants (an object is on at most one idle list, bytes
 * are counted in exactly one place, a waiter is woken by whatever change it waits for):
 * {@link AllocationQueue} (waiting allocations and their admission: eviction, fallback files),
 * {@link IdleLists} (the LRU and evictable lists), {@link Spiller} (the spill thread, spill files
 * and compaction), {@link Restorer} (restores and the prefetch pool) and {@link StoreCounters}
 * (the byte and time counters behind {@link StoreMetrics}). Each part reaches the others through
 * the engine and asserts the lock is held wherever it touches shared state; the engine keeps
 * the object table and what ties the parts together: an object's seal, pins and free.
 *
 * <p>Thread-safety: thread-safe; all state, the parts' included, is guarded by {@link #lock}.
 */
final class StoreEngine {

    private static final MemorySegment EMPTY = MemorySegment.ofArray(new byte[0]);
    private static final long REGION_CLOSE_RETRY_MILLIS = 10_000;

    final String name;
    private final StoreDirectories dirs;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;

    /** The one lock of the store and its parts. */
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever memory is freed, an object changes state, or the queue head changes. */
    final Condition changed = lock.newCondition();

    private final Map<ObjectId, ObjectEntry> table = new HashMap<>();
    /** Every entry not yet freed, including deleted ones still pinned; for metrics and close. */
    private final Set<ObjectEntry> live = new LinkedHashSet<>();

    private long useClock;
    private boolean closed;
    /** The failure of an internal thread that died, or null; see {@link #fail}. */
    private StoreFailedException failure;
    private int ioInFlight;

    final StoreCounters counters;
    final IdleLists idle;
    final AllocationQueue allocations;
    final Spiller spiller;
    final Restorer restorer;

    StoreEngine(String name, StoreDirectories dirs, MemoryRegion region, long spillFileBytes, Compression compression,
                Semaphore spillGate, FaultHook faults) {
        this.name = name;
        this.dirs = dirs;
        this.region = region;
        this.allocator = region.allocator();
        this.counters = new StoreCounters(lock);
        this.idle = new IdleLists(this);
        this.allocations = new AllocationQueue(this, region, dirs);
        this.spiller = new Spiller(this, dirs, region, spillFileBytes, compression, spillGate, faults);
        this.restorer = new Restorer(this, region, faults);
        spiller.start();
    }

    // ---------------------------------------------------------------- create, seal, abort

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
                    long offset = allocations.allocate(size, priority);
                    if (offset >= 0) {
                        entry.offset = offset;
                    } else {
                        entry.fallback = allocations.newFallback(entry);
                    }
                    counters.placed(entry);
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

    private void seal(ObjectEntry entry, ObjectId listedAs) {
        lock.lock();
        try {
            checkOpen();
            entry.sealed = true;
            entry.listedAs = listedAs.equals(entry.id) ? null : listedAs;
            entry.lastUse = ++useClock;
            if (entry.deleted) {
                free(entry);
            } else {
                list(entry);
                idle.makeIdle(entry);
            }
        } finally {
            lock.unlock();
        }
    }

    private void abort(ObjectEntry entry) {
        lock.lock();
        try {
            if (!closed) {
                table.remove(entry.id, entry);
                free(entry);
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- state bookkeeping

    /**
     * Lists a sealed entry whose bytes are in the region in the store's directory, if it keeps
     * one ({@link ObjectDirectory}). Called locked.
     */
    void list(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        ObjectDirectory directory = region.directory();
        if (directory != null && entry.sealed && entry.offset >= 0 && entry.listedSlot < 0) {
            entry.listedSlot = directory.list(entry.listedAs != null ? entry.listedAs : entry.id, entry.offset,
                    entry.size);
        }
    }

    /**
     * Gives the entry's region bytes back to the allocator, unlisting it first: a reader on
     * another process that copied the bytes sees the directory change and drops its copy.
     * Called locked.
     */
    void releaseRegionBytes(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (entry.listedSlot >= 0) {
            region.directory().unlist(entry.listedSlot);
            entry.listedSlot = -1;
        }
        allocator.free(entry.offset, entry.size);
        entry.offset = -1;
    }

    /** Releases the entry's memory, fallback file and spill copy. Called locked. */
    void free(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        if (entry.freed) {
            return;
        }
        entry.freed = true;
        idle.makeBusy(entry);
        live.remove(entry);
        counters.freeing(entry);
        if (entry.offset >= 0) {
            releaseRegionBytes(entry);
        }
        if (entry.fallback != null) {
            entry.fallback.close();
            entry.fallback = null;
        }
        if (entry.spill != null) {
            spiller.dropSpillCopy(entry);
        }
        spiller.retry();
        changed.signalAll();
    }

    // ---------------------------------------------------------------- get, prefetch, readers

    PinnedObject get(ObjectId id) throws InterruptedException {
        lock.lock();
        try {
            ObjectEntry entry = restorer.pin(id, Priority.TASK_OUTPUT);
            return new Pinned(entry, segmentOf(entry).asReadOnly());
        } finally {
            lock.unlock();
        }
    }

    /** Restores spilled objects in the background; see {@link Restorer#prefetch}. */
    CompletableFuture<Void> prefetch(Collection<ObjectId> ids) {
        return restorer.prefetch(ids);
    }

    ObjectReader openReader(ObjectId id) throws InterruptedException {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.resident() || entry.restoring || entry.spill.compression() != Compression.NONE) {
                entry = restorer.pin(id, Priority.TASK_OUTPUT);
                MemorySegment view = segmentOf(entry).asReadOnly();
                return new ObjectReader(this, new Pinned(entry, view), view, null);
            }
            // pinned, the spill copy stays where it is: neither dropped nor compacted away
            idle.makeBusy(entry);
            entry.pins++;
            return new ObjectReader(this, new Pinned(entry, null), null, entry.spill);
        } finally {
            lock.unlock();
        }
    }

    /** One read of an {@link ObjectReader} of a spilled object; counted as I/O so close waits for it. */
    MemorySegment readSpilled(ObjectId id, SpillRecord record, long size, long offset, int length, ByteBuffer window,
            boolean checkHeader) throws IOException {
        lock.lock();
        try {
            checkOpen();
            ioStarted();
        } finally {
            lock.unlock();
        }
        try {
            return SpillReader.readRange(id, record, size, offset, length, window, checkHeader);
        } finally {
            lock.lock();
            try {
                ioEnded();
            } finally {
                lock.unlock();
            }
        }
    }

    // ---------------------------------------------------------------- queries, delete

    boolean contains(ObjectId id) {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            checkOpen();
            ObjectEntry entry = table.get(id);
            return entry != null && entry.sealed;
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

    boolean sharesMemory() {
        return region.file() != null;
    }

    Path directoryFile() {
        return region.directory() == null ? null : region.directory().file();
    }

    ObjectLocation describe(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.fallback != null) {
                return new ObjectLocation(entry.fallback.file(), 0, entry.size, false);
            }
            if (entry.offset >= 0 || entry.size == 0) {
                if (!sharesMemory()) {
                    throw new ObjectStoreException("object " + entry.id + " of store '" + name + "' lies in the"
                            + " store's private memory (built with sharedMemory(false)), which no other process"
                            + " can map; get() it");
                }
                return new ObjectLocation(region.file(), Math.max(0, entry.offset), entry.size, true);
            }
            if (entry.spill.compression() != Compression.NONE) {
                throw new ObjectStoreException("object " + entry.id + " in store '" + name
                        + "' is spilled LZ4-compressed in " + entry.spill.file()
                        + " and cannot be mapped as it is; get() it first");
            }
            return new ObjectLocation(entry.spill.file().path, entry.spill.payloadOffset(), entry.size, false);
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
            if (entry.sealed && entry.pins == 0 && !entry.spilling) {
                free(entry);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The table's entry for the id, or null. Called locked. */
    ObjectEntry entry(ObjectId id) {
        assert lock.isHeldByCurrentThread();
        return table.get(id);
    }

    /** The sealed object's entry; throws if there is none. Called locked. */
    ObjectEntry sealedEntry(ObjectId id) {
        assert lock.isHeldByCurrentThread();
        ObjectEntry entry = table.get(id);
        if (entry == null) {
            throw new ObjectNotFoundException(name, id, "no such object (never created or deleted)");
        }
        if (!entry.sealed) {
            throw new ObjectNotFoundException(name, id, "the object is being written and not sealed yet");
        }
        return entry;
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

    private void unpin(ObjectEntry entry) {
        lock.lock();
        try {
            if (!closed) {
                unpinLocked(entry);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Drops a pin; the last one makes the entry idle, or frees it if deleted. Called locked. */
    void unpinLocked(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
        entry.pins--;
        if (entry.pins == 0) {
            entry.lastUse = ++useClock;
            if (entry.deleted && !entry.spilling) {
                free(entry);
            } else {
                idle.makeIdle(entry);
            }
        }
    }

    // ---------------------------------------------------------------- metrics, close

    StoreMetrics metrics() {
        lock.lock();
        try {
            return counters.snapshot(allocator, live, spiller.files(), allocations.length(), spiller.failures());
        } finally {
            lock.unlock();
        }
    }

    /** Waits until no spill write is in flight (tests use it to observe deferred frees). */
    void awaitSpillIdle() throws InterruptedException {
        lock.lock();
        try {
            while (spiller.spillingBytes() > 0) {
                checkOpen();
                changed.await();
            }
        } finally {
            lock.unlock();
        }
    }

    void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            spiller.wakeToStop();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        restorer.shutdown();
        boolean interrupted = false;
        try {
            spiller.join();
            restorer.awaitTermination();
        } catch (InterruptedException e) {
            interrupted = true;
        }
        lock.lock();
        try {
            while (ioInFlight > 0) {
                changed.awaitUninterruptibly();
            }
            for (ObjectEntry entry : new ArrayList<>(live)) {
                free(entry);
            }
            table.clear();
            spiller.closeFiles();
        } finally {
            lock.unlock();
        }
        try {
            closeRegion();
        } finally {
            dirs.close();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Unmaps the region, waiting for callers' own I/O on views (which holds the mapping) to end. */
    private void closeRegion() {
        long deadline = System.currentTimeMillis() + REGION_CLOSE_RETRY_MILLIS;
        while (true) {
            try {
                region.close();
                return;
            } catch (IllegalStateException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw new ObjectStoreException("store '" + name + "' cannot unmap its memory: a view is still"
                            + " in use by an I/O operation", e);
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new ObjectStoreException("store '" + name + "' interrupted while unmapping its memory", e);
                }
            }
        }
    }

    // ---------------------------------------------------------------- the store's life, for the parts

    /** True once {@link #close} began. Called locked. */
    boolean isClosed() {
        assert lock.isHeldByCurrentThread();
        return closed;
    }

    /** True while the store is neither closed nor failed. Called locked. */
    boolean isRunning() {
        assert lock.isHeldByCurrentThread();
        return !closed && failure == null;
    }

    /** Every entry not yet freed, including deleted ones still pinned. Called locked. */
    Collection<ObjectEntry> live() {
        assert lock.isHeldByCurrentThread();
        return Collections.unmodifiableCollection(live);
    }

    /** An I/O on store memory or a spill file begins; close waits for it to end. Called locked. */
    void ioStarted() {
        assert lock.isHeldByCurrentThread();
        ioInFlight++;
    }

    /** An I/O counted by {@link #ioStarted} ended. Called locked. */
    void ioEnded() {
        assert lock.isHeldByCurrentThread();
        ioInFlight--;
        changed.signalAll();
    }

    /** Throws if the store is closed or failed. Called locked. */
    void checkOpen() {
        if (closed) {
            throw new StoreClosedException(name);
        }
        if (failure != null) {
            throw failed();
        }
    }

    /** A new exception for the store's failure, so each caller gets its own stack trace. */
    StoreFailedException failed() {
        return new StoreFailedException(name, failure.thread(), failure.getCause());
    }

    /**
     * Fails the store: the calling internal thread is dying of {@code cause}. Wakes every waiter
     * (allocations, restores, the spill thread) so they throw the failure, and makes later calls
     * throw it. The first failure wins; a closed store stays closed.
     *
     * @return the failure, for the dying thread to throw
     */
    StoreFailedException fail(Throwable cause) {
        lock.lock();
        try {
            if (failure == null && !closed) {
                failure = new StoreFailedException(name, Thread.currentThread().getName(), cause);
                changed.signalAll();
                spiller.wakeToStop();
            }
            return new StoreFailedException(name, Thread.currentThread().getName(), cause);
        } finally {
            lock.unlock();
        }
    }

    /** A caller's handle on one entry: its id, a view of its bytes, and an end that happens once. */
    private abstract static class Handle {
        final ObjectEntry entry;
        private final MemorySegment segment;
        /** Guarded by this handle's monitor. */
        private boolean ended;

        Handle(ObjectEntry entry, MemorySegment segment) {
            this.entry = entry;
            this.segment = segment;
        }

        public final ObjectId id() {
            return entry.id;
        }

        public final MemorySegment segment() {
            return segment;
        }

        /**
         * Runs {@code end} if the handle has not ended yet, holding the handle's monitor so that
         * a racing end returns only after this one is done.
         *
         * @return false if the handle had already ended
         */
        final synchronized boolean end(Runnable end) {
            if (ended) {
                return false;
            }
            ended = true;
            end.run();
            return true;
        }
    }

    /** The writer's handle on an unsealed object. */
    private final class Writable extends Handle implements WritableObject {

        Writable(ObjectEntry entry, MemorySegment segment) {
            super(entry, segment);
        }

        @Override
        public void seal() {
            sealListedAs(entry.id);
        }

        @Override
        public void sealListedAs(ObjectId listedAs) {
            Objects.requireNonNull(listedAs, "listedAs");
            if (!end(() -> StoreEngine.this.seal(entry, listedAs))) {
                throw new IllegalStateException("object " + entry.id + " in store '" + name
                        + "' is already sealed or closed");
            }
        }

        @Override
        public void close() {
            end(() -> abort(entry));
        }
    }

    /** A reader's pin on a sealed object. */
    private final class Pinned extends Handle implements PinnedObject {

        Pinned(ObjectEntry entry, MemorySegment view) {
            super(entry, view);
        }

        @Override
        public long size() {
            return entry.size;
        }

        @Override
        public void close() {
            end(() -> unpin(entry));
        }
    }
}
