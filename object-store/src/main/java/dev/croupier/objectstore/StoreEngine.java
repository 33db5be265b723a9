package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
 * to fused files. Spilling also starts ahead of need once more than {@link #SPILL_THRESHOLD} of
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

    /** Fraction of capacity above which objects are spilled ahead of need (Ray uses 0.8). */
    static final double SPILL_THRESHOLD = 0.8;
    /** A closed spill file is compacted once its live copies fill less than this fraction of it. */
    static final double COMPACT_LIVE_FRACTION = 0.25;
    /** Prefetch rounds one compaction may start before it waits for a copy of the file to die. */
    static final int COMPACT_PREFETCH_ROUNDS = 3;
    /** Threads restoring prefetched objects. */
    static final int PREFETCH_THREADS = 2;
    /** Most objects per spill batch (bounds the gathering write's buffer list). */
    static final int MAX_BATCH_OBJECTS = 1024;
    /** Largest spill batch in bytes (before the capacity-based cap). */
    static final long MAX_BATCH_BYTES = 64L << 20;
    /** Largest run of adjacent spilled objects a prefetch restores with one read. */
    static final long MAX_RESTORE_RUN_BYTES = 8L << 20;
    /** Smallest spill batch in bytes (before the capacity-based cap). */
    static final long MIN_BATCH_BYTES = 8L << 20;

    private static final MemorySegment EMPTY = MemorySegment.ofArray(new byte[0]);
    private static final long REGION_CLOSE_RETRY_MILLIS = 10_000;

    final String name;
    static final System.Logger LOG = System.getLogger(StoreEngine.class.getName());
    private final StoreDirectories dirs;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;
    private final SpillWriter writer;
    private final long minBatch;
    private final long maxBatch;
    /** Test seam: the spill thread takes a permit before each batch write; null in production. */
    private final Semaphore spillGate;
    /** Test seam: lets a test make an internal thread throw; {@link FaultHook#NONE} in production. */
    private final FaultHook faults;

    final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever memory is freed, an object changes state, or the queue head changes. */
    final Condition changed = lock.newCondition();
    /** Signalled when the spill thread may have work. */
    private final Condition spillWanted = lock.newCondition();

    private final Map<ObjectId, ObjectEntry> table = new HashMap<>();
    /** Every entry not yet freed, including deleted ones still pinned; for metrics and close. */
    private final Set<ObjectEntry> live = new LinkedHashSet<>();
    private final TreeMap<Integer, SpillFile> spillFiles = new TreeMap<>();
    private final Thread spillThread;
    private final ExecutorService prefetchPool;
    private SpillLog log;

    private long useClock;
    private boolean closed;
    /** The failure of an internal thread that died, or null; see {@link #fail}. */
    private StoreFailedException failure;
    private int ioInFlight;
    private long spillingBytes;
    /** Spill attempts failed so far; a waiter seeing this grow while it waits gets the failure. */
    private long spillFailures;
    /** Closed spill files waiting to be compacted, oldest first; guarded by the lock. */
    private final Set<SpillFile> compactions = new LinkedHashSet<>();
    private SpillFailedException lastSpillFailure;
    /** After a failure, spilling waits for a new request or a free before trying again. */
    private boolean spillBlocked;

    final StoreCounters counters;
    final IdleLists idle;
    final AllocationQueue allocations;

    StoreEngine(String name, StoreDirectories dirs, MemoryRegion region, long spillFileBytes, Compression compression,
                Semaphore spillGate, FaultHook faults) {
        this.name = name;
        this.spillGate = spillGate;
        this.faults = faults;
        this.dirs = dirs;
        this.region = region;
        this.allocator = region.allocator();
        this.writer = new SpillWriter(dirs.spillDir(), spillFileBytes, compression);
        this.maxBatch = Math.max(FreeListAllocator.ALIGNMENT, Math.min(MAX_BATCH_BYTES, allocator.capacity() / 4));
        this.minBatch = Math.min(MIN_BATCH_BYTES, Math.max(FreeListAllocator.ALIGNMENT, allocator.capacity() / 16));
        this.counters = new StoreCounters(lock);
        this.idle = new IdleLists(this);
        this.allocations = new AllocationQueue(this, region, dirs);
        this.spillThread = Thread.ofPlatform().daemon().name("croupier-spill-" + name).unstarted(() -> {
            try {
                spillLoop();
            } catch (Throwable t) {
                fail(t);
            }
        });
        AtomicInteger threadNo = new AtomicInteger();
        this.prefetchPool = Executors.newFixedThreadPool(PREFETCH_THREADS, r -> Thread.ofPlatform().daemon()
                .name("croupier-prefetch-" + name + "-" + threadNo.incrementAndGet()).unstarted(r));
        spillThread.start();
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
    private void free(ObjectEntry entry) {
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
            dropSpillCopy(entry);
        }
        spillBlocked = false;
        changed.signalAll();
    }

    /** Marks the entry's spill copy dead; deletes its file if that was the last, else maybe compacts it. Called locked. */
    private void dropSpillCopy(ObjectEntry entry) {
        SpillRecord record = entry.spill;
        entry.spill = null;
        SpillFile file = record.file();
        file.liveObjects--;
        file.compactPrefetches = 0;
        file.liveBytes -= SpillFrame.frameBytes(record.storedLength());
        spillLog().dead(entry.id, record, entry.size);
        deleteIfDead(file);
        if (!file.deleted && file.full && file.liveBytes < COMPACT_LIVE_FRACTION * file.end()
                && compactions.add(file)) {
            spillWanted.signal();
        }
    }

    /**
     * Compaction of a closed spill file whose live copies fill less than
     * {@link #COMPACT_LIVE_FRACTION} of it, so a few long-lived objects cannot pin a mostly dead
     * file on disk forever. It reuses the store's own moves instead of copying frames: live
     * objects still in memory lose their spill copy (they become ordinary unspilled objects,
     * which the spill thread writes again, into the current file, only if memory runs short), and
     * spilled ones are prefetched first and handled the same way once their restore is done. When
     * the last copy is dropped the file is deleted as any dead file. Busy objects (pinned,
     * restoring) are left for a later pass; the file is looked at again whenever one of its copies
     * dies or a compaction prefetch finishes. Runs on the spill thread, locked, without waiting
     * for I/O: the prefetch needs the spill thread to make room.
     */
    private void compact(SpillFile file) {
        if (file.deleted || closed) {
            return;
        }
        List<ObjectEntry> copies = new ArrayList<>();
        for (ObjectEntry entry : live) {
            if (entry.spill != null && entry.spill.file() == file) {
                copies.add(entry);
            }
        }
        List<ObjectId> spilled = new ArrayList<>();
        for (ObjectEntry entry : copies) {
            if (entry.pins > 0 || entry.restoring || entry.spilling || !entry.sealed) {
                continue;
            }
            if (entry.resident()) {
                idle.makeBusy(entry);
                entry.prefetched = false;
                counters.compactedCopy(entry.size);
                dropSpillCopy(entry);
                idle.makeIdle(entry);
            } else {
                spilled.add(entry.id);
            }
        }
        if (file.deleted) {
            counters.compactedFile();
        } else if (!spilled.isEmpty() && file.compactPrefetches++ < COMPACT_PREFETCH_ROUNDS) {
            // look again once the restores are in; a prefetch may also give up when memory is full
            lock.unlock();
            try {
                prefetch(spilled).whenComplete((done, failure) -> {
                    lock.lock();
                    try {
                        if (!closed && !file.deleted && compactions.add(file)) {
                            spillWanted.signal();
                        }
                    } finally {
                        lock.unlock();
                    }
                });
            } finally {
                lock.lock();
            }
        }
    }

    private void deleteIfDead(SpillFile file) {
        if (file.full && file.liveObjects == 0 && !file.deleted) {
            try {
                file.delete();
            } catch (IOException e) {
                throw new ObjectStoreException("store '" + name + "' cannot delete dead spill file " + file, e);
            }
            spillFiles.remove(file.number);
            spillLog().fileDeleted(file.number);
        }
    }

    private SpillLog spillLog() {
        if (log == null) {
            log = new SpillLog(dirs.spillDir());
        }
        return log;
    }

    // ---------------------------------------------------------------- spilling

    /** Spill attempts failed so far. Called locked. */
    long spillFailures() {
        return spillFailures;
    }

    /** A new exception for the last spill failure, so each waiter gets its own. Called locked. */
    SpillFailedException spillFailure() {
        return new SpillFailedException(name, lastSpillFailure.directory(), lastSpillFailure.bytesWanted(),
                lastSpillFailure.getCause());
    }

    /** Bytes being written by the spill thread now. Called locked. */
    long spillingBytes() {
        return spillingBytes;
    }

    /** Lets spilling try again after a failure (a new request or a free may now succeed). Called locked. */
    void retrySpill() {
        spillBlocked = false;
    }

    /** Wakes the spill thread. Called locked. */
    void wakeSpill() {
        spillWanted.signal();
    }

    /** Wakes the spill thread if it has work. Called locked. */
    void wakeSpillIfWanted() {
        if (wantsSpill()) {
            spillWanted.signal();
        }
    }

    private boolean wantsSpill() {
        if (spillBlocked || !idle.hasSpillCandidates()) {
            return false;
        }
        return allocations.waiting()
                || allocator.used() - idle.evictableBytes() - spillingBytes > SPILL_THRESHOLD * allocator.capacity();
    }

    private void spillLoop() {
        List<ObjectEntry> batch = new ArrayList<>();
        List<SpillWriter.Item> items = new ArrayList<>();
        boolean needLog;
        while (true) {
            batch.clear();
            items.clear();
            faults.at(FaultHook.Site.SPILL_THREAD);
            lock.lock();
            try {
                while (!closed && failure == null && !wantsSpill() && (compactions.isEmpty() || spillBlocked)) {
                    spillWanted.awaitUninterruptibly();
                }
                if (closed || failure != null) {
                    return;
                }
                if (!wantsSpill()) {
                    SpillFile file = compactions.iterator().next();
                    compactions.remove(file);
                    compact(file);
                    continue;
                }
                long target = Math.max(minBatch, Math.min(maxBatch, allocations.queuedBytes()
                        + (long) (allocator.used() - idle.evictableBytes() - SPILL_THRESHOLD * allocator.capacity())));
                long bytes = idle.leastRecentlyUsed(target, MAX_BATCH_OBJECTS, batch);
                for (ObjectEntry entry : batch) {
                    idle.makeBusy(entry);
                    entry.spilling = true;
                    items.add(new SpillWriter.Item(entry.id, region.slice(entry.offset, entry.size)));
                }
                spillingBytes += bytes;
                ioInFlight++;
                needLog = log == null;
            } finally {
                lock.unlock();
            }
            SpillLog newLog = null;
            long start = System.nanoTime();
            SpillWriter.Result result;
            try {
                // Chronicle takes a while to create its queue: do it before the first batch, unlocked
                newLog = needLog ? new SpillLog(dirs.spillDir()) : null;
                if (spillGate != null) {
                    spillGate.acquireUninterruptibly();
                }
                start = System.nanoTime();
                SpillEvent event = new SpillEvent();
                event.begin();
                result = writer.write(items);
                if (event.shouldCommit()) {
                    event.store = name;
                    event.objects = result.records().size();
                    for (int i = 0; i < event.objects; i++) {
                        event.bytes += items.get(i).bytes().byteSize();
                    }
                    event.commit();
                }
            } catch (RuntimeException | Error e) {
                // never leave objects marked as spilling (close would wait for them forever)
                result = new SpillWriter.Result(List.of(), new IOException("spill write failed", e), List.of(),
                        List.of());
            }
            long nanos = System.nanoTime() - start;
            lock.lock();
            try {
                if (newLog != null) {
                    log = newLog;
                }
                finishSpill(batch, result, nanos);
            } finally {
                lock.unlock();
            }
        }
    }

    private void finishSpill(List<ObjectEntry> batch, SpillWriter.Result result, long nanos) {
        ioInFlight--;
        counters.spillTook(nanos);
        for (SpillFile file : result.newFiles()) {
            spillFiles.put(file.number, file);
        }
        long failedBytes = 0;
        for (int i = 0; i < batch.size(); i++) {
            ObjectEntry entry = batch.get(i);
            entry.spilling = false;
            spillingBytes -= entry.size;
            if (i < result.records().size()) {
                SpillRecord record = result.records().get(i);
                entry.spill = record;
                record.file().liveObjects++;
                record.file().liveBytes += SpillFrame.frameBytes(record.storedLength());
                counters.spilled(entry.size);
                spillLog().spilled(entry.id, record, entry.size);
            } else {
                failedBytes += entry.size;
            }
            if (entry.deleted && entry.pins == 0) {
                free(entry);
            } else {
                idle.makeIdle(entry);
            }
        }
        for (SpillFile file : result.closedFiles()) {
            file.full = true;
            deleteIfDead(file);
        }
        if (result.failure() != null) {
            spillFailures++;
            spillBlocked = true;
            lastSpillFailure = new SpillFailedException(name, writer.dir(), failedBytes, result.failure());
        }
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
            return counters.snapshot(allocator, live, spillFiles.values(), allocations.length(), spillFailures);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until no spill write is in flight (tests use it to observe deferred frees). */
    void awaitSpillIdle() throws InterruptedException {
        lock.lock();
        try {
            while (spillingBytes > 0) {
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
            spillWanted.signalAll();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        // not shutdownNow: a dropped task would leave its prefetch future incomplete forever;
        // queued tasks run, see the store closed and return at once
        prefetchPool.shutdown();
        boolean interrupted = false;
        try {
            spillThread.join();
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
            for (SpillFile file : spillFiles.values()) {
                try {
                    file.channel.close();
                } catch (IOException e) {
                    // the directory is deleted below; a close failure changes nothing
                }
            }
            spillFiles.clear();
            if (log != null) {
                log.close();
            }
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
    private StoreFailedException fail(Throwable cause) {
        lock.lock();
        try {
            if (failure == null && !closed) {
                failure = new StoreFailedException(name, Thread.currentThread().getName(), cause);
                changed.signalAll();
                spillWanted.signalAll();
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
