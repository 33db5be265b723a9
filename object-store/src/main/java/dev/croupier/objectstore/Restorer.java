package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Reading spilled objects back into memory: on the caller's thread for a pin ({@code get},
 * {@code openReader}) and on the prefetch pool for a prefetch, where raw objects adjacent in a
 * spill file are restored as runs with one read each. Owns the prefetch pool; the entries it
 * restores are marked restoring and pinned while the read runs unlocked.
 *
 * <p>Thread-safety: guarded by the engine's lock; {@link #pin} is called with it held (asserted)
 * and releases it during I/O, {@link #prefetch} and the pool's tasks take it themselves.
 */
final class Restorer {

    /** Threads restoring prefetched objects. */
    static final int PREFETCH_THREADS = 2;
    /** Largest run of adjacent spilled objects a prefetch restores with one read. */
    static final long MAX_RESTORE_RUN_BYTES = 8L << 20;

    private final StoreEngine engine;
    private final ReentrantLock lock;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;
    /** Test seam: lets a test make a prefetch thread throw; {@link FaultHook#NONE} in production. */
    private final FaultHook faults;
    private final ExecutorService prefetchPool;

    Restorer(StoreEngine engine, MemoryRegion region, FaultHook faults) {
        this.engine = engine;
        this.lock = engine.lock;
        this.region = region;
        this.allocator = region.allocator();
        this.faults = faults;
        AtomicInteger threadNo = new AtomicInteger();
        this.prefetchPool = Executors.newFixedThreadPool(PREFETCH_THREADS, r -> Thread.ofPlatform().daemon()
                .name("croupier-prefetch-" + engine.name + "-" + threadNo.incrementAndGet()).unstarted(r));
    }

    /**
     * Stops taking prefetches. Not shutdownNow: a dropped task would leave its prefetch future
     * incomplete forever; queued tasks run, see the store closed and return at once.
     */
    void shutdown() {
        prefetchPool.shutdown();
    }

    /** Waits up to a minute for the prefetch threads to end after {@link #shutdown}. */
    void awaitTermination() throws InterruptedException {
        prefetchPool.awaitTermination(1, TimeUnit.MINUTES);
    }

    /**
     * Pins the object, restoring it first if it is spilled. Returns null only for a prefetch that
     * found no memory. Releases the lock during I/O.
     */
    ObjectEntry pin(ObjectId id, Priority priority) throws InterruptedException {
        assert lock.isHeldByCurrentThread();
        while (true) {
            engine.checkOpen();
            ObjectEntry entry = engine.sealedEntry(id);
            if (entry.resident()) {
                engine.idle.makeBusy(entry);
                entry.pins++;
                entry.prefetched = false;
                return entry;
            }
            if (entry.restoring) {
                engine.changed.await();
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
                engine.unpinLocked(entry);
                throw e;
            } finally {
                entry.restoring = false;
                engine.changed.signalAll();
            }
        }
    }

    /** Reads a spilled entry, pinned and marked restoring, back into memory. */
    private boolean restore(ObjectEntry entry, Priority priority) throws InterruptedException {
        assert lock.isHeldByCurrentThread();
        long offset = engine.allocations.allocate(entry.size, priority);
        FallbackFile fallback = null;
        if (offset < 0) {
            if (priority == Priority.PREFETCH) {
                engine.unpinLocked(entry);
                return false;
            }
            fallback = engine.allocations.newFallback(entry);
        }
        MemorySegment target = offset >= 0 ? region.slice(offset, entry.size) : fallback.segment();
        SpillRecord record = entry.spill;
        engine.ioStarted();
        lock.unlock();
        long start = System.nanoTime();
        Exception failure = null;
        RestoreEvent event = jdk.jfr.FlightRecorder.isInitialized() ? new RestoreEvent() : null; // see SpillEvent
        if (event != null) {
            event.begin();
        }
        try {
            SpillReader.readInto(entry.id, record, target);
            if (event != null && event.shouldCommit()) {
                event.store = engine.name;
                event.objects = 1;
                event.bytes = entry.size;
                event.commit();
            }
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            lock.lock();
            engine.ioEnded();
        }
        if (failure != null) {
            if (offset >= 0) {
                allocator.free(offset, entry.size);
            } else {
                fallback.close();
            }
            throw new ObjectStoreException("store '" + engine.name + "' cannot restore object " + entry.id
                    + " from spill file " + record.file() + " at offset " + record.frameOffset() + ": "
                    + failure.getMessage(), failure);
        }
        engine.counters.restoreTook(System.nanoTime() - start);
        if (offset >= 0) {
            entry.offset = offset;
            engine.list(entry);
        } else {
            entry.fallback = fallback;
        }
        engine.counters.restored(entry);
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
            if (engine.isClosed()) {
                return CompletableFuture.completedFuture(null);
            }
            if (!engine.isRunning()) {
                return CompletableFuture.failedFuture(engine.failed());
            }
            List<ObjectEntry> raw = new ArrayList<>();
            for (ObjectId id : ids) {
                ObjectEntry entry = engine.entry(id);
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
                    long offset = engine.allocations.allocate(entry.size, Priority.PREFETCH);
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
            engine.ioStarted();
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
        RestoreEvent event = jdk.jfr.FlightRecorder.isInitialized() ? new RestoreEvent() : null; // see SpillEvent
        if (event != null) {
            event.begin();
        }
        try {
            SpillReader.readRun(expected, records, targets);
            if (event != null && event.shouldCommit()) {
                event.store = engine.name;
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
            engine.ioEnded();
            for (int i = 0; i < done.size(); i++) {
                ObjectEntry entry = done.get(i);
                if (failure == null) {
                    entry.offset = offsets.get(i);
                    engine.list(entry);
                    engine.counters.restored(entry);
                    entry.prefetched = true;
                } else {
                    allocator.free(offsets.get(i), entry.size);
                }
            }
            if (failure == null) {
                engine.counters.restoreTook(System.nanoTime() - start);
            }
            releaseRun(done);
        } finally {
            lock.unlock();
        }
    }

    /** Ends the restore of run entries: clears the flag and drops the run's pin. */
    private void releaseRun(List<ObjectEntry> entries) {
        assert lock.isHeldByCurrentThread();
        for (ObjectEntry entry : entries) {
            entry.restoring = false;
            engine.unpinLocked(entry);
        }
        engine.changed.signalAll();
    }

    private void prefetchOne(ObjectId id) {
        faults.at(FaultHook.Site.PREFETCH_ONE);
        lock.lock();
        try {
            if (engine.isClosed()) {
                return;
            }
            ObjectEntry entry = engine.entry(id);
            if (entry == null || !entry.sealed || entry.resident()) {
                return;
            }
            ObjectEntry pinned = pin(id, Priority.PREFETCH);
            if (pinned != null) {
                pinned.prefetched = true;
                engine.unpinLocked(pinned);
            }
        } catch (ObjectNotFoundException e) {
            // deleted while the prefetch waited: nothing to restore
        } catch (ObjectStoreException e) {
            if (!engine.isClosed()) {
                throw e;
            }
            // the store closed while the prefetch waited for memory: a prefetch just gives up
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
            throw engine.fail(t);
        }
    }
}
