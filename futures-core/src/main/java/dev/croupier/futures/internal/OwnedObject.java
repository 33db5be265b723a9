package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.objectstore.ObjectId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * The owner's record of one object: its state, where copies live, who still needs it, and
 * the lineage (creating task and return index) to rebuild it from.
 *
 * <p>Design (after Ray's ownership model): the owner, the driver's {@link OwnerCluster}, is the
 * one authority on an object; nodes only hold copies. A value is {@code READY} once some node
 * holds it; a READY entry
 * whose every location has died is lost, and is rebuilt lazily by re-running its creator when
 * someone asks for it. An entry is {@code FREED} when no ref and no pending task needs it;
 * its lineage stays reachable from the entries made from it, so it can still be rebuilt if
 * one of those is lost. All fields are guarded by the entry's monitor; callbacks run outside it.
 */
final class OwnedObject {

    enum State { PENDING, READY, FAILED, FREED }

    /** The high half of the object's id: the owner's session tag. */
    final long tag;
    /** The low half: the owner's sequence number, by which {@link EntryTable} keeps entries. */
    final long seq;
    /** The task that makes this object, or null for {@code put}. */
    final TaskSpec creator;
    /** Which of the creator's return values this is. */
    final int returnIndex;

    private State state = State.PENDING;
    /**
     * The value's frame when it lives with the owner instead of on a node: a small value
     * returned inline by a node process (as Ray's owner keeps small objects in process).
     */
    private byte[] inline;
    /**
     * The NodeLink incarnations holding a copy (a dead incarnation's copy is gone): null for
     * none, the link itself for one, an array of two or more, replaced, never changed. Most
     * objects have one copy: an array of one was 24 bytes per ready entry (the owner keeps
     * millions), and a pointer from an entry the collector had promoted to a young array.
     */
    private Object copies;

    private static final NodeLink[] NO_LINKS = new NodeLink[0];
    private long size;
    private CroupierException error;
    private List<Runnable> waiters;
    /**
     * The release of the entry's one ref handle (made with it) until it runs. Held here so
     * that a handle collected unreleased finds its release enqueued: a phantom reference that
     * is itself unreachable is never enqueued.
     */
    private OwnedRef.Release handle;
    private int taskUses;
    private long completionSeq;

    OwnedObject(ObjectId id, TaskSpec creator, int returnIndex) {
        this.tag = id.high();
        this.seq = id.low();
        this.creator = creator;
        this.returnIndex = returnIndex;
    }

    /**
     * The object's id, made for each caller: the owner keeps millions of entries, and an id
     * object in each was 36 of its bytes.
     */
    ObjectId id() {
        return new ObjectId(tag, seq);
    }

    synchronized State state() {
        return state;
    }

    synchronized long size() {
        return size;
    }

    synchronized CroupierException error() {
        return error;
    }

    synchronized long completionSeq() {
        return completionSeq;
    }

    /** Done in the sense of {@code wait}: ready (even if lost since) or failed. */
    synchronized boolean isDone() {
        return state == State.READY || state == State.FAILED;
    }

    /**
     * The size once ready or failed, kept once freed; -1 while pending (also while being
     * rebuilt) and for an entry freed before it settled. A settled entry has a completion number.
     */
    synchronized long doneSize() {
        boolean freedSettled = state == State.FREED && completionSeq != 0;
        return state == State.READY || state == State.FAILED || freedSettled ? size : -1;
    }

    /** Ready with a copy on a live node. */
    synchronized boolean isAvailable() {
        return state == State.READY && held();
    }

    /** Whether a copy exists: with the owner, or on a live node. Caller holds the monitor. */
    private boolean held() {
        return inline != null || liveLocation(null) != null;
    }

    /** The frame the owner holds, or null if the value lives on nodes. */
    synchronized byte[] inline() {
        return inline;
    }

    /** Makes the entry ready with its frame held by the owner; see {@link #markReady}. */
    synchronized List<Runnable> markReadyInline(byte[] frame, long seq) {
        if (state == State.FREED || state == State.FAILED) {
            return REJECTED;
        }
        size = frame.length;
        inline = frame;
        if (state == State.READY) {
            return null;
        }
        state = State.READY;
        completionSeq = seq;
        return settle();
    }

    /** A live node holding a copy, preferring {@code preferred}; null if none. */
    synchronized NodeLink liveLocation(NodeLink preferred) {
        forgetLocations(n -> !n.alive());
        int count = copyCount();
        for (int i = 0; i < count; i++) {
            if (copyAt(i) == preferred) {
                return preferred;
            }
        }
        return count == 0 ? null : copyAt(0);
    }

    synchronized boolean isLocatedOn(NodeLink node) {
        return indexOf(node) >= 0;
    }

    /** Forgets a copy the node turned out not to have. */
    synchronized void removeLocation(NodeLink node) {
        forgetLocations(n -> n == node);
    }

    /** Forgets the copies on nodes with these ids: a node looked there and found none. */
    synchronized void removeLocations(int[] nodeIds) {
        forgetLocations(n -> {
            for (int id : nodeIds) {
                if (n.id == id) {
                    return true;
                }
            }
            return false;
        });
    }

    /** How many copies there are. Caller holds the monitor. */
    private int copyCount() {
        return copies == null ? 0 : copies instanceof NodeLink ? 1 : ((NodeLink[]) copies).length;
    }

    /** The i-th copy's node. Caller holds the monitor. */
    private NodeLink copyAt(int i) {
        return copies instanceof NodeLink n ? n : ((NodeLink[]) copies)[i];
    }

    /** Caller holds the monitor. */
    private int indexOf(NodeLink node) {
        int count = copyCount();
        for (int i = 0; i < count; i++) {
            if (copyAt(i) == node) {
                return i;
            }
        }
        return -1;
    }

    /** Records a copy on {@code node} unless one is. Caller holds the monitor. */
    private void locate(NodeLink node) {
        int count = copyCount();
        if (count == 0) {
            copies = node;
        } else if (indexOf(node) < 0) {
            NodeLink[] more = new NodeLink[count + 1];
            for (int i = 0; i < count; i++) {
                more[i] = copyAt(i);
            }
            more[count] = node;
            copies = more;
        }
    }

    /** Drops the copies {@code gone} names (asked once per copy). Caller holds the monitor. */
    private void forgetLocations(Predicate<NodeLink> gone) {
        int count = copyCount();
        NodeLink[] kept = null;
        int k = 0;
        for (int i = 0; i < count; i++) {
            NodeLink n = copyAt(i);
            if (gone.test(n)) {
                if (kept == null) {
                    kept = new NodeLink[count - 1];
                    for (int j = 0; j < i; j++) {
                        kept[j] = copyAt(j);
                    }
                    k = i;
                }
            } else if (kept != null) {
                kept[k++] = n;
            }
        }
        if (kept != null) {
            copies = k == 0 ? null : k == 1 ? kept[0] : k == kept.length ? kept : Arrays.copyOf(kept, k);
        }
    }

    /**
     * Adds the value's size to every node that holds a copy and takes new work: placement's
     * measure of locality, read under the entry's monitor without copying the locations.
     */
    synchronized void addSizeTo(java.util.Map<NodeLink, Long> bytesByNode) {
        int count = copyCount();
        for (int i = 0; i < count; i++) {
            NodeLink n = copyAt(i);
            if (n.placeable()) {
                bytesByNode.merge(n, size, Long::sum);
            }
        }
    }

    /** The entry as an attempt's argument: its frame if the owner holds it, else its live copies. */
    synchronized AttemptCall.Ref asArgument() {
        if (inline != null) {
            return new AttemptCall.Ref(id(), inline.length, NO_NODES, inline);
        }
        forgetLocations(n -> !n.alive());
        int[] ids = new int[copyCount()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = copyAt(i).id;
        }
        return new AttemptCall.Ref(id(), size, ids, null);
    }

    private static final int[] NO_NODES = new int[0];

    /**
     * Records a new copy on {@code node}. Returns false (and records nothing) if the entry
     * was freed meanwhile, in which case the caller deletes its copy.
     */
    synchronized boolean addLocation(NodeLink node) {
        if (state == State.FREED) {
            return false;
        }
        locate(node);
        return true;
    }

    /**
     * Makes the entry ready on {@code node}; returns the waiters to run, or null if there are
     * none. Returns {@link #REJECTED} if the entry no longer wants a value (it was freed or
     * failed meanwhile).
     */
    synchronized List<Runnable> markReady(NodeLink node, long bytes, long seq) {
        if (state == State.FREED || state == State.FAILED) {
            return REJECTED;
        }
        size = bytes;
        locate(node);
        if (state == State.READY) {
            return null;
        }
        state = State.READY;
        completionSeq = seq;
        return settle();
    }

    /** Fails the entry (once; a ready or failed entry keeps its state) and returns the waiters to run. */
    synchronized List<Runnable> markFailed(CroupierException cause, long seq) {
        if (state == State.FAILED || (state == State.READY && held())) {
            return null;
        }
        state = State.FAILED;
        error = cause;
        completionSeq = seq;
        copies = null;
        return settle();
    }

    /**
     * Turns a lost or freed entry back to pending so that its creator can rebuild it.
     * Returns false if it is not lost (still available, already pending, or failed).
     */
    synchronized boolean markRebuilding() {
        if (state == State.FREED || (state == State.READY && !held())) {
            state = State.PENDING;
            return true;
        }
        return false;
    }

    /**
     * Runs {@code callback} (outside the monitor) once the entry is ready or failed. If it is
     * lost or freed, returns true without running it, after queueing it: the caller must
     * rebuild the entry.
     */
    boolean whenSettled(Runnable callback) {
        boolean runNow;
        boolean lost = false;
        synchronized (this) {
            runNow = state == State.FAILED || (state == State.READY && held());
            if (!runNow) {
                lost = state != State.PENDING;
                if (waiters == null) {
                    waiters = new ArrayList<>(2);
                }
                waiters.add(callback);
            }
        }
        if (runNow) {
            callback.run();
        }
        return lost;
    }

    private List<Runnable> settle() {
        List<Runnable> w = waiters;
        waiters = null;
        notifyAll();
        return w;
    }

    /** Marker for {@link #markReady}: the value was not wanted. */
    static final List<Runnable> REJECTED = List.of();

    synchronized void addHandle(OwnedRef.Release release) {
        if (handle != null) {
            throw new IllegalStateException(this + " has its handle already");
        }
        handle = release;
    }

    synchronized void addTaskUse() {
        taskUses++;
    }

    /** Drops the ref handle; returns true if nothing needs the value any more. */
    synchronized boolean dropHandle(OwnedRef.Release release) {
        if (handle == release) {
            handle = null;
        }
        return unneeded();
    }

    /** Drops a pending task's claim; returns true if nothing needs the value any more. */
    synchronized boolean dropTaskUse() {
        taskUses--;
        return unneeded();
    }

    synchronized boolean unneeded() {
        return handle == null && taskUses <= 0;
    }

    /**
     * Frees the entry if nothing needs it; returns the live copies to delete, or null if it
     * was needed after all (or already freed). Waiters of a pending entry stay until
     * {@link #takeWaitersOfFreed}.
     */
    synchronized NodeLink[] free() {
        if (!unneeded() || state == State.FREED) {
            return null;
        }
        NodeLink[] freed = copies == null ? NO_LINKS : new NodeLink[copyCount()];
        for (int i = 0; i < freed.length; i++) {
            freed[i] = copyAt(i);
        }
        copies = null;
        inline = null;
        if (state != State.FAILED) {
            state = State.FREED;
        }
        notifyAll(); // a get of the released ref waits in awaitSettled
        return freed;
    }

    /**
     * The waiters of a freed entry, taken once; null if none. Nothing claims a freed entry, so
     * they belong to refs released while they waited, or to tasks cancelled or resubmitted
     * since (which ignore a call): run now, they end their futures instead of waiting for a
     * value that will not be made for them.
     */
    synchronized List<Runnable> takeWaitersOfFreed() {
        if (state != State.FREED) {
            return null;
        }
        List<Runnable> w = waiters;
        waiters = null;
        return w;
    }

    /**
     * Blocks until ready, failed or freed, at most until {@code deadlineNanos}; returns whether
     * it is. An entry is freed only once its one ref is released (and no pending task needs it),
     * so a getter that finds it freed had its ref released under it.
     */
    synchronized boolean awaitSettled(long deadlineNanos) throws InterruptedException {
        while (state == State.PENDING) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            long ms = Math.max(1, left / 1_000_000);
            wait(Math.min(ms, 1000));
        }
        return true;
    }

    @Override
    public String toString() {
        return "object " + id() + (creator == null ? " (put)" : " (return " + returnIndex + " of task '" + creator.name + "')");
    }
}
