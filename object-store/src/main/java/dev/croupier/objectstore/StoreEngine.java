package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store's state machine: object table, LRU lists, allocation queue, spill thread, restores.
 *
 * <p>Design note: one lock guards all state (taken once per object operation, never per
 * record); byte copies and disk I/O happen outside it. Allocation follows Ray's object manager
 * as the Exoshuffle paper describes it: a request that does not fit waits in a priority queue
 * (task outputs before prefetches, FIFO within a priority; only the head allocates, so a big
 * request is not starved) while the spill thread writes least recently used unpinned objects
 * to fused files. Spilling also starts ahead of need once more than {@link Spiller#SPILL_THRESHOLD} of
 * memory holds objects without a spill copy; such objects keep their memory until an
 * allocation needs it, then are evicted at once (their copy is on disk). When nothing can be
 * spilled, a task output falls back to a file on disk so the job keeps going, and a prefetch
 * gives up. Spilled objects are restored by {@code get} on the caller's thread, or by the
 * prefetch pool at low priority.
 *
 * <p>Callers wait on the internal threads (for memory the spill thread frees, for restores a
 * prefetch thread started), so a thread that dies of an unexpected error must not leave them
 * waiting: it fails the store ({@link #fail}), which wakes every waiter to throw a
 * {@link StoreFailedException} carrying the error, as does every later call.
 *
 * <p>This class is longer than the house's usual size because the allocation, spill and
 * restore paths share one lock and one set of invariants; splitting them would spread those
 * invariants over several files.
 *
 * <p>Thread-safety: thread-safe.
 */
final class StoreEngine {

    /** Threads restoring prefetched objects. */
    static final int PREFETCH_THREADS = 2;
    /** Largest run of adjacent spilled objects a prefetch restores with one read. */
    static final long MAX_RESTORE_RUN_BYTES = 8L << 20;

    private static final MemorySegment EMPTY = MemorySegment.ofArray(new byte[0]);
    private static final long REGION_CLOSE_RETRY_MILLIS = 10_000;

    final String name;
    static final System.Logger LOG = System.getLogger(StoreEngine.class.getName());
    private final StoreDirectories dirs;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;
    /** Test seam: lets a test make a prefetch thread throw; {@link FaultHook#NONE} in production. */
    private final FaultHook faults;

    final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever memory is freed, an object changes state, or the queue head changes. */
    final Condition changed = lock.newCondition();

    private final Map<ObjectId, ObjectEntry> table = new HashMap<>();
    /** Every entry not yet freed, including deleted ones still pinned; for metrics and close. */
    private final Set<ObjectEntry> live = new LinkedHashSet<>();
    private final ExecutorService prefetchPool;

    private long useClock;
    private boolean closed;
    /** The failure of an internal thread that died, or null; see {@link #fail}. */
    private StoreFailedException failure;
    private int ioInFlight;

    final StoreCounters counters;
    final IdleLists idle;
    final AllocationQueue allocations;
    final Spiller spiller;

    StoreEngine(String name, StoreDirectories dirs, MemoryRegion region, long spillFileBytes, Compression compression,
                Semaphore spillGate, FaultHook faults) {
        this.name = name;
        this.faults = faults;
        this.dirs = dirs;
        this.region = region;
        this.allocator = region.allocator();
        this.counters = new StoreCounters(lock);
        this.idle = new IdleLists(this);
        this.allocations = new AllocationQueue(this, region, dirs);
        this.spiller = new Spiller(this, dirs, region, spillFileBytes, compression, spillGate, faults);
        AtomicInteger threadNo = new AtomicInteger();
        this.prefetchPool = Executors.newFixedThreadPool(PREFETCH_THREADS, r -> Thread.ofPlatform().daemon()
                .name("croupier-prefetch-" + name + "-" + threadNo.incrementAndGet()).unstarted(r));
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

    private void seal(ObjectEntry entry) {
        lock.lock();
        try {
            checkOpen();
            entry.sealed = true;
            entry.lastUse = ++useClock;
            if (entry.deleted) {
                free(entry);
            } else {
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

    /** Releases the entry's memory, fallback file and spill copy. Called locked. */
    void free(ObjectEntry entry) {
        if (entry.freed) {
            return;
        }
        entry.freed = true;
        idle.makeBusy(entry);
        live.remove(entry);
        counters.freeing(entry);
        if (entry.offset >= 0) {
            allocator.free(entry.offset, entry.size);
            entry.offset = -1;
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

    // ---------------------------------------------------------------- get, restore, prefetch

    PinnedObject get(ObjectId id) throws InterruptedException {
        lock.lock();
        try {
            ObjectEntry entry = pinResident(id, Priority.TASK_OUTPUT);
            return new Pinned(entry, segmentOf(entry).asReadOnly());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Pins the object, restoring it first if it is spilled. Returns null only for a prefetch that
     * found no memory. Called locked; releases the lock during I/O.
     */
    private ObjectEntry pinResident(ObjectId id, Priority priority) throws InterruptedException {
        while (true) {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.resident()) {
                idle.makeBusy(entry);
                entry.pins++;
                entry.prefetched = false;
                return entry;
            }
            if (entry.restoring) {
                changed.await();
                continue;
            }
            entry.restoring = true;
            entry.pins++;
            try {
                if (!restore(entry, priority)) {
                    return null;
                }
                return entry;
            } catch (InterruptedException | RuntimeException e) {
                unpinLocked(entry);
                throw e;
            } finally {
                entry.restoring = false;
                changed.signalAll();
            }
        }
    }

    /** Reads a spilled, pinned entry back into memory. Called locked with entry.restoring set. */
    private boolean restore(ObjectEntry entry, Priority priority) throws InterruptedException {
        long offset = allocations.allocate(entry.size, priority);
        FallbackFile fallback = null;
        if (offset < 0) {
            if (priority == Priority.PREFETCH) {
                unpinLocked(entry);
                return false;
            }
            fallback = allocations.newFallback(entry);
        }
        MemorySegment target = offset >= 0 ? region.slice(offset, entry.size) : fallback.segment();
        SpillRecord record = entry.spill;
        ioInFlight++;
        lock.unlock();
        long start = System.nanoTime();
        Exception failure = null;
        RestoreEvent event = new RestoreEvent();
        event.begin();
        try {
            SpillReader.readInto(entry.id, record, target);
            if (event.shouldCommit()) {
                event.store = name;
                event.objects = 1;
                event.bytes = entry.size;
                event.commit();
            }
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            lock.lock();
            ioInFlight--;
            changed.signalAll();
        }
        if (failure != null) {
            if (offset >= 0) {
                allocator.free(offset, entry.size);
            } else {
                fallback.close();
            }
            throw new ObjectStoreException("store '" + name + "' cannot restore object " + entry.id
                    + " from spill file " + record.file() + " at offset " + record.frameOffset() + ": "
                    + failure.getMessage(), failure);
        }
        counters.restoreTook(System.nanoTime() - start);
        if (offset >= 0) {
            entry.offset = offset;
        } else {
            entry.fallback = fallback;
        }
        counters.restored(entry);
        return true;
    }

    /**
     * Restores spilled objects in the background. Raw objects that lie next to each other in a
     * spill file (as objects spilled together do) are restored as runs with one scattering read
     * per run, the read-side twin of fused writes; compressed objects one by one.
     */
    CompletableFuture<Void> prefetch(Collection<ObjectId> ids) {
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        List<List<ObjectEntry>> runs = new ArrayList<>();
        List<ObjectId> singles = new ArrayList<>();
        lock.lock();
        try {
            if (closed) {
                return CompletableFuture.completedFuture(null);
            }
            if (failure != null) {
                return CompletableFuture.failedFuture(failed());
            }
            List<ObjectEntry> raw = new ArrayList<>();
            for (ObjectId id : ids) {
                ObjectEntry entry = table.get(id);
                if (entry == null || !entry.sealed || entry.resident() || entry.restoring || raw.contains(entry)) {
                    continue;
                }
                if (entry.spill.compression() == Compression.NONE) {
                    raw.add(entry);
                } else {
                    singles.add(id);
                }
            }
            raw.sort(Comparator.comparingInt((ObjectEntry e) -> e.spill.file().number)
                    .thenComparingLong(e -> e.spill.frameOffset()));
            List<ObjectEntry> run = new ArrayList<>();
            long runBytes = 0;
            for (ObjectEntry entry : raw) {
                if (!run.isEmpty()) {
                    SpillRecord last = run.getLast().spill;
                    long gap = entry.spill.frameOffset() - last.frameEnd();
                    boolean adjacent = last.file() == entry.spill.file() && gap >= 0 && gap <= SpillReader.MAX_RUN_GAP;
                    if (!adjacent || runBytes + entry.size > MAX_RESTORE_RUN_BYTES) {
                        runs.add(run);
                        run = new ArrayList<>();
                        runBytes = 0;
                    }
                }
                entry.restoring = true;
                entry.pins++;
                run.add(entry);
                runBytes += entry.size;
            }
            if (!run.isEmpty()) {
                runs.add(run);
            }
        } finally {
            lock.unlock();
        }
        try {
            for (int i = 0; i < runs.size(); i++) {
                List<ObjectEntry> r = runs.get(i);
                futures.add(CompletableFuture.runAsync(() -> failOnDeath(() -> restoreRun(r)), prefetchPool));
                runs.set(i, List.of());
            }
            for (ObjectId id : singles) {
                futures.add(CompletableFuture.runAsync(() -> failOnDeath(() -> prefetchOne(id)), prefetchPool));
            }
        } catch (RejectedExecutionException e) {
            // the store closed meanwhile: drop the restores not handed to the pool
            lock.lock();
            try {
                for (List<ObjectEntry> r : runs) {
                    releaseRun(r);
                }
            } finally {
                lock.unlock();
            }
        }
        return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
    }

    /**
     * Restores a run of adjacent raw frames (entries already marked restoring and pinned):
     * allocates each at prefetch priority, stopping at the first that finds no memory, then
     * reads the allocated prefix with one scattering read.
     */
    private void restoreRun(List<ObjectEntry> run) {
        faults.at(FaultHook.Site.PREFETCH_RUN);
        List<MemorySegment> targets = new ArrayList<>(run.size());
        List<Long> offsets = new ArrayList<>(run.size());
        lock.lock();
        try {
            try {
                for (ObjectEntry entry : run) {
                    long offset = allocations.allocate(entry.size, Priority.PREFETCH);
                    if (offset < 0) {
                        break;
                    }
                    offsets.add(offset);
                    targets.add(region.slice(offset, entry.size));
                }
            } catch (InterruptedException | RuntimeException e) {
                // store closing or failed, or pool stopping: give the run up
            }
            if (targets.size() < run.size()) {
                releaseRun(run.subList(targets.size(), run.size()));
            }
            if (targets.isEmpty()) {
                return;
            }
            ioInFlight++;
        } finally {
            lock.unlock();
        }
        List<ObjectEntry> done = run.subList(0, targets.size());
        List<SpillRecord> records = new ArrayList<>(done.size());
        List<ObjectId> expected = new ArrayList<>(done.size());
        for (ObjectEntry entry : done) {
            records.add(entry.spill);
            expected.add(entry.id);
        }
        long start = System.nanoTime();
        Exception failure = null;
        RestoreEvent event = new RestoreEvent();
        event.begin();
        try {
            SpillReader.readRun(expected, records, targets);
            if (event.shouldCommit()) {
                event.store = name;
                event.objects = targets.size();
                for (ObjectEntry entry : done) {
                    event.bytes += entry.size;
                }
                event.prefetch = true;
                event.commit();
            }
        } catch (IOException | RuntimeException e) {
            failure = e;
        }
        lock.lock();
        try {
            ioInFlight--;
            for (int i = 0; i < done.size(); i++) {
                ObjectEntry entry = done.get(i);
                if (failure == null) {
                    entry.offset = offsets.get(i);
                    counters.restored(entry);
                    entry.prefetched = true;
                } else {
                    allocator.free(offsets.get(i), entry.size);
                }
            }
            if (failure == null) {
                counters.restoreTook(System.nanoTime() - start);
            }
            releaseRun(done);
        } finally {
            lock.unlock();
        }
    }

    /** Ends the restore of run entries: clears the flag and drops the run's pin. Called locked. */
    private void releaseRun(List<ObjectEntry> entries) {
        for (ObjectEntry entry : entries) {
            entry.restoring = false;
            unpinLocked(entry);
        }
        changed.signalAll();
    }

    private void prefetchOne(ObjectId id) {
        faults.at(FaultHook.Site.PREFETCH_ONE);
        lock.lock();
        try {
            if (closed) {
                return;
            }
            ObjectEntry entry = table.get(id);
            if (entry == null || !entry.sealed || entry.resident()) {
                return;
            }
            ObjectEntry pinned = pinResident(id, Priority.PREFETCH);
            if (pinned != null) {
                pinned.prefetched = true;
                unpinLocked(pinned);
            }
        } catch (ObjectNotFoundException e) {
            // deleted while the prefetch waited: nothing to restore
        } catch (ObjectStoreException e) {
            if (!closed) {
                throw e;
            }
            // the store closed while the prefetch waited for memory: a prefetch just gives up
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    ObjectReader openReader(ObjectId id) throws InterruptedException {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.resident() || entry.restoring || entry.spill.compression() != Compression.NONE) {
                entry = pinResident(id, Priority.TASK_OUTPUT);
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
            ioInFlight++;
        } finally {
            lock.unlock();
        }
        try {
            return SpillReader.readRange(id, record, size, offset, length, window, checkHeader);
        } finally {
            lock.lock();
            try {
                ioInFlight--;
                changed.signalAll();
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

    ObjectLocation describe(ObjectId id) {
        lock.lock();
        try {
            checkOpen();
            ObjectEntry entry = sealedEntry(id);
            if (entry.offset >= 0) {
                return new ObjectLocation(region.file(), entry.offset, entry.size, true);
            }
            if (entry.fallback != null) {
                return new ObjectLocation(entry.fallback.file(), 0, entry.size, false);
            }
            if (entry.size == 0) {
                return new ObjectLocation(region.file(), 0, 0, true);
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

    private void unpinLocked(ObjectEntry entry) {
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
        // not shutdownNow: a dropped task would leave its prefetch future incomplete forever;
        // queued tasks run, see the store closed and return at once
        prefetchPool.shutdown();
        boolean interrupted = false;
        try {
            spiller.join();
            prefetchPool.awaitTermination(1, TimeUnit.MINUTES);
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

    void checkOpen() {
        if (closed) {
            throw new StoreClosedException(name);
        }
        if (failure != null) {
            throw failed();
        }
    }

    /** A new exception for the store's failure, so each caller gets its own stack trace. */
    private StoreFailedException failed() {
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

    /**
     * Runs a prefetch thread's work. An {@link ObjectStoreException} is that prefetch's own typed
     * failure (a restore that could not be read, a closed or failed store): its future reports
     * it and the store's state is whole. Anything else means the thread died mid-change, with
     * entries it had marked restoring and pinned and callers waiting for them: the store fails.
     */
    private void failOnDeath(Runnable work) {
        try {
            work.run();
        } catch (ObjectStoreException e) {
            throw e;
        } catch (Throwable t) {
            throw fail(t);
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
            if (!end(() -> StoreEngine.this.seal(entry))) {
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
