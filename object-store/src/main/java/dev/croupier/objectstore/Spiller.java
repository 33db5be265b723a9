package dev.croupier.objectstore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The spill thread and what it writes and compacts: it writes least recently used idle objects
 * in batches to fused spill files, when an allocation waits or more than
 * {@link #SPILL_THRESHOLD} of memory holds objects without a spill copy, and with nothing to
 * spill it compacts mostly dead spill files. Owns the thread, the spill files on disk, the spill
 * log, the files waiting for compaction, and the spill state allocations read: bytes being
 * written, failures so far and whether spilling is blocked after one.
 *
 * <p>Thread-safety: guarded by the engine's lock, which every method but {@link #start} and
 * {@link #join} asserts is held; the thread takes it once per batch and writes unlocked.
 */
final class Spiller {

    /** Fraction of capacity above which objects are spilled ahead of need (Ray uses 0.8). */
    static final double SPILL_THRESHOLD = 0.8;
    /** A closed spill file is compacted once its live copies fill less than this fraction of it. */
    static final double COMPACT_LIVE_FRACTION = 0.25;
    /** Prefetch rounds one compaction may start before it waits for a copy of the file to die. */
    static final int COMPACT_PREFETCH_ROUNDS = 3;
    /** Most objects per spill batch (bounds the gathering write's buffer list). */
    static final int MAX_BATCH_OBJECTS = 1024;
    /** Largest spill batch in bytes (before the capacity-based cap). */
    static final long MAX_BATCH_BYTES = 64L << 20;
    /** Smallest spill batch in bytes (before the capacity-based cap). */
    static final long MIN_BATCH_BYTES = 8L << 20;

    private final StoreEngine engine;
    private final ReentrantLock lock;
    /** Signalled when the spill thread may have work. */
    private final Condition spillWanted;
    private final StoreDirectories dirs;
    private final MemoryRegion region;
    private final FreeListAllocator allocator;
    private final SpillWriter writer;
    private final long minBatch;
    private final long maxBatch;
    /** Test seam: the spill thread takes a permit before each batch write; null in production. */
    private final Semaphore spillGate;
    /** Test seam: lets a test make the spill thread throw; {@link FaultHook#NONE} in production. */
    private final FaultHook faults;
    private final Thread thread;

    private final TreeMap<Integer, SpillFile> spillFiles = new TreeMap<>();
    private SpillLog log;
    /** Closed spill files waiting to be compacted, oldest first. */
    private final Set<SpillFile> compactions = new LinkedHashSet<>();
    private long spillingBytes;
    /** Spill attempts failed so far; a waiter seeing this grow while it waits gets the failure. */
    private long spillFailures;
    private SpillFailedException lastSpillFailure;
    /** After a failure, spilling waits for a new request or a free before trying again. */
    private boolean spillBlocked;

    Spiller(StoreEngine engine, StoreDirectories dirs, MemoryRegion region, long spillFileBytes,
            Compression compression, Semaphore spillGate, FaultHook faults) {
        this.engine = engine;
        this.lock = engine.lock;
        this.spillWanted = lock.newCondition();
        this.dirs = dirs;
        this.region = region;
        this.allocator = region.allocator();
        this.writer = new SpillWriter(dirs.spillDir(), spillFileBytes, compression);
        this.maxBatch = Math.max(FreeListAllocator.ALIGNMENT, Math.min(MAX_BATCH_BYTES, allocator.capacity() / 4));
        this.minBatch = Math.min(MIN_BATCH_BYTES, Math.max(FreeListAllocator.ALIGNMENT, allocator.capacity() / 16));
        this.spillGate = spillGate;
        this.faults = faults;
        this.thread = Thread.ofPlatform().daemon().name("croupier-spill-" + engine.name).unstarted(() -> {
            try {
                loop();
            } catch (Throwable t) {
                engine.fail(t);
            }
        });
    }

    /** Starts the spill thread. */
    void start() {
        thread.start();
    }

    /** Waits for the spill thread to end; it does once the store is closed or failed and it is woken. */
    void join() throws InterruptedException {
        thread.join();
    }

    /** Wakes the spill thread. */
    void wake() {
        assert lock.isHeldByCurrentThread();
        spillWanted.signal();
    }

    /** Wakes the spill thread if it has work. */
    void wakeIfWanted() {
        assert lock.isHeldByCurrentThread();
        if (wantsSpill()) {
            spillWanted.signal();
        }
    }

    /** Wakes the spill thread to see the store closed or failed. */
    void wakeToStop() {
        assert lock.isHeldByCurrentThread();
        spillWanted.signalAll();
    }

    /** Lets spilling try again after a failure (a new request or a free may now succeed). */
    void retry() {
        assert lock.isHeldByCurrentThread();
        spillBlocked = false;
    }

    /** Spill attempts failed so far. */
    long failures() {
        assert lock.isHeldByCurrentThread();
        return spillFailures;
    }

    /** A new exception for the last spill failure, so each waiter gets its own. */
    SpillFailedException lastFailure() {
        assert lock.isHeldByCurrentThread();
        return new SpillFailedException(engine.name, lastSpillFailure.directory(), lastSpillFailure.bytesWanted(),
                lastSpillFailure.getCause());
    }

    /** Bytes being written by the spill thread now. */
    long spillingBytes() {
        assert lock.isHeldByCurrentThread();
        return spillingBytes;
    }

    /** The spill files on disk. */
    Collection<SpillFile> files() {
        assert lock.isHeldByCurrentThread();
        return spillFiles.values();
    }

    /** Closes the spill files and the spill log, once the thread has ended and every object is freed. */
    void closeFiles() {
        assert lock.isHeldByCurrentThread();
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
    }

    /** Marks the entry's spill copy dead; deletes its file if that was the last, else maybe compacts it. */
    void dropSpillCopy(ObjectEntry entry) {
        assert lock.isHeldByCurrentThread();
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
        assert lock.isHeldByCurrentThread();
        if (file.deleted || engine.isClosed()) {
            return;
        }
        List<ObjectEntry> copies = new ArrayList<>();
        for (ObjectEntry entry : engine.live()) {
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
                engine.idle.makeBusy(entry);
                entry.prefetched = false;
                engine.counters.compactedCopy(entry.size);
                dropSpillCopy(entry);
                engine.idle.makeIdle(entry);
            } else {
                spilled.add(entry.id);
            }
        }
        if (file.deleted) {
            engine.counters.compactedFile();
        } else if (!spilled.isEmpty() && file.compactPrefetches++ < COMPACT_PREFETCH_ROUNDS) {
            // look again once the restores are in; a prefetch may also give up when memory is full
            lock.unlock();
            try {
                engine.restorer.prefetch(spilled).whenComplete((done, failure) -> {
                    lock.lock();
                    try {
                        if (!engine.isClosed() && !file.deleted && compactions.add(file)) {
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
        assert lock.isHeldByCurrentThread();
        if (file.full && file.liveObjects == 0 && !file.deleted) {
            try {
                file.delete();
            } catch (IOException e) {
                throw new ObjectStoreException("store '" + engine.name + "' cannot delete dead spill file " + file, e);
            }
            spillFiles.remove(file.number);
            spillLog().fileDeleted(file.number);
        }
    }

    private SpillLog spillLog() {
        assert lock.isHeldByCurrentThread();
        if (log == null) {
            log = new SpillLog(dirs.spillDir());
        }
        return log;
    }

    private boolean wantsSpill() {
        assert lock.isHeldByCurrentThread();
        if (spillBlocked || !engine.idle.hasSpillCandidates()) {
            return false;
        }
        return engine.allocations.waiting()
                || allocator.used() - engine.idle.evictableBytes() - spillingBytes
                        > SPILL_THRESHOLD * allocator.capacity();
    }

    private void loop() {
        List<ObjectEntry> batch = new ArrayList<>();
        List<SpillWriter.Item> items = new ArrayList<>();
        boolean needLog;
        while (true) {
            batch.clear();
            items.clear();
            faults.at(FaultHook.Site.SPILL_THREAD);
            lock.lock();
            try {
                while (engine.isRunning() && !wantsSpill() && (compactions.isEmpty() || spillBlocked)) {
                    spillWanted.awaitUninterruptibly();
                }
                if (!engine.isRunning()) {
                    return;
                }
                if (!wantsSpill()) {
                    SpillFile file = compactions.iterator().next();
                    compactions.remove(file);
                    compact(file);
                    continue;
                }
                long target = Math.max(minBatch, Math.min(maxBatch, engine.allocations.queuedBytes()
                        + (long) (allocator.used() - engine.idle.evictableBytes()
                                - SPILL_THRESHOLD * allocator.capacity())));
                long bytes = engine.idle.leastRecentlyUsed(target, MAX_BATCH_OBJECTS, batch);
                for (ObjectEntry entry : batch) {
                    engine.idle.makeBusy(entry);
                    entry.spilling = true;
                    items.add(new SpillWriter.Item(entry.id, region.slice(entry.offset, entry.size)));
                }
                spillingBytes += bytes;
                engine.ioStarted();
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
                SpillEvent event = jdk.jfr.FlightRecorder.isInitialized() ? new SpillEvent() : null;
                if (event != null) {
                    event.begin();
                }
                result = writer.write(items);
                if (event != null && event.shouldCommit()) {
                    event.store = engine.name;
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
        assert lock.isHeldByCurrentThread();
        engine.ioEnded();
        engine.counters.spillTook(nanos);
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
                engine.counters.spilled(entry.size);
                spillLog().spilled(entry.id, record, entry.size);
            } else {
                failedBytes += entry.size;
            }
            if (entry.deleted && entry.pins == 0) {
                engine.free(entry);
            } else {
                engine.idle.makeIdle(entry);
            }
        }
        for (SpillFile file : result.closedFiles()) {
            file.full = true;
            deleteIfDead(file);
        }
        if (result.failure() != null) {
            spillFailures++;
            spillBlocked = true;
            lastSpillFailure = new SpillFailedException(engine.name, writer.dir(), failedBytes, result.failure());
        }
        engine.changed.signalAll();
    }
}
