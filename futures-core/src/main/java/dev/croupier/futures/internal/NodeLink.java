package dev.croupier.futures.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The owner's view of one node incarnation: its id, CPU slots and address, whether the owner
 * still counts it alive, the attempts dispatched to it that have not reported back, and the
 * ready tasks that wait for room on it.
 *
 * <p>Design: the owner knows a node only through this link and its {@link Backend}; which
 * process, thread pool or network is behind it is the backend's business. The in-flight table
 * is the owner's truth about where an attempt runs: an outcome whose attempt is no longer in it
 * (the node was declared dead, or the attempt was cancelled) is stale and ignored, which is how
 * a late message from a node declared dead loses its power. A restarted node is a new link; a
 * reference to an old one (say, as an object's location) is simply dead.
 *
 * <p>A node holds at most {@value #ATTEMPTS_PER_SLOT} attempts per CPU slot; the tasks that
 * prefer it beyond that wait here, at the owner, in order: those that must run here (hard
 * affinity) or whose arguments are here, and those that would rather (soft affinity), which a
 * node with room and nothing of its own may take instead. A node's queue is then never longer
 * than its next task per slot, so a slow node holds back at most that much work while others
 * idle (docs/benchmarks.md, "Nodes take work as they have room").
 *
 * <p>Thread-safe: the tables are guarded by the link's monitor.
 */
final class NodeLink {

    final int id;
    final int cpus;
    /** Where the node's services are ({@code host:port}); a name for the embedded backend. */
    final String address;
    /**
     * Attempts a node holds per CPU slot: one running and the next queued behind it, so a slot
     * never waits for a dispatch to cross the network.
     */
    static final int ATTEMPTS_PER_SLOT = 2;

    private final Map<Long, TaskSpec.Attempt> inFlight = new HashMap<>();
    /** Ready tasks that run only here (hard affinity) or whose arguments are here, oldest first. */
    private final ArrayDeque<TaskSpec.Ready> pinned = new ArrayDeque<>();
    /** Ready tasks that prefer this node and may run elsewhere, oldest first. */
    private final ArrayDeque<TaskSpec.Ready> preferring = new ArrayDeque<>();
    /** {@code inFlight.size()} and {@code preferring.size()}, read without the monitor: the owner asks every node. */
    private volatile int held;
    private volatile int movable;
    private volatile boolean alive = true;

    /**
     * The identity hash, taken once at construction. Maps keyed by links (a backend's per-node
     * state, placement's bytes per node) hash a link on every lookup, and a link's monitor,
     * contended by the threads that report outcomes, is soon inflated: the identity hash of an
     * object whose monitor is inflated is a call into the VM each time.
     */
    private final int hash = System.identityHashCode(this);

    NodeLink(int id, int cpus, String address) {
        this.id = id;
        this.cpus = cpus;
        this.address = address;
    }

    /** Consistent with identity equality, which links keep. */
    @Override
    public int hashCode() {
        return hash;
    }

    boolean alive() {
        return alive;
    }

    /** The node said it is stopping: alive until it ends, but no place for new work. */
    private volatile boolean draining;

    void drain() {
        draining = true;
    }

    /** Whether new work may go there: alive and not draining. */
    boolean placeable() {
        return alive && !draining;
    }

    /** Attempts in flight per CPU slot: the placement's measure of load. */
    double load() {
        return held / (double) cpus;
    }

    /** Whether the node is alive and holds fewer attempts than {@link #ATTEMPTS_PER_SLOT} per slot. */
    boolean hasRoom() {
        return alive && held < cpus * ATTEMPTS_PER_SLOT;
    }

    /**
     * Queues a ready task that stays for this node ({@code pinned}: hard affinity, or its
     * arguments are here) or prefers it; false if the node is dead, and the caller places the
     * task again.
     */
    synchronized boolean await(TaskSpec.Ready ready, boolean pinned) {
        if (!alive) {
            return false;
        }
        (pinned ? this.pinned : preferring).add(ready);
        movable = preferring.size();
        return true;
    }

    /**
     * Takes the oldest task waiting for this node (of those that may run elsewhere, none while
     * it drains), unless {@code other} became ready before it; null if none is taken.
     */
    synchronized TaskSpec.Ready nextWaiting(TaskSpec.Ready other) {
        TaskSpec.Ready mustRun = pinned.peek();
        TaskSpec.Ready mayRun = draining ? null : preferring.peek();
        TaskSpec.Ready oldest = mayRun == null || mustRun != null && mustRun.seq() < mayRun.seq() ? mustRun : mayRun;
        if (oldest == null || other != null && other.seq() < oldest.seq()) {
            return null;
        }
        if (oldest == mustRun) {
            pinned.poll();
        } else {
            preferring.poll();
            movable = preferring.size();
        }
        return oldest;
    }

    /** How many ready tasks wait for room here. */
    synchronized int waiting() {
        return pinned.size() + preferring.size();
    }

    /** How many waiting tasks another node may {@linkplain #steal take}. */
    int stealable() {
        return movable;
    }

    /**
     * Takes the oldest waiting task that may run elsewhere, needs at most {@code cpus} slots and
     * does not {@code stay}; null if none. Those found to stay (their arguments are here) are
     * kept as pinned in the same step, under this link's monitor: a task taken out to be looked
     * at and put back later was, for that moment, in no list, and this node's own fill, on
     * another thread, could find nothing, return, and leave it waiting beside an idle node.
     */
    synchronized TaskSpec.Ready steal(int cpus, Predicate<TaskSpec.Ready> stays) {
        TaskSpec.Ready taken = null;
        for (Iterator<TaskSpec.Ready> it = preferring.iterator(); it.hasNext() && taken == null; ) {
            TaskSpec.Ready ready = it.next();
            if (ready.spec().cpus <= cpus) {
                it.remove();
                if (stays.test(ready)) {
                    pinned.add(ready);
                } else {
                    taken = ready;
                }
            }
        }
        movable = preferring.size();
        return taken;
    }

    /**
     * Takes the waiting tasks to be placed again: all of them ({@code hardToo}, the node died)
     * or all but those with hard affinity (it drains).
     */
    synchronized List<TaskSpec.Ready> takeWaiting(boolean hardToo) {
        List<TaskSpec.Ready> taken = new ArrayList<>(preferring);
        preferring.clear();
        movable = 0;
        for (Iterator<TaskSpec.Ready> it = pinned.iterator(); it.hasNext(); ) {
            TaskSpec.Ready ready = it.next();
            if (hardToo || !ready.spec().pinnedToNode()) {
                taken.add(ready);
                it.remove();
            }
        }
        return taken;
    }

    /** Records a dispatch; false if the node is dead. */
    synchronized boolean add(TaskSpec.Attempt attempt) {
        if (!alive) {
            return false;
        }
        inFlight.put(attempt.id, attempt);
        held = inFlight.size();
        return true;
    }

    /** Takes the attempt an outcome or a cancel names; null if stale. */
    synchronized TaskSpec.Attempt remove(long attemptId) {
        TaskSpec.Attempt attempt = inFlight.remove(attemptId);
        held = inFlight.size();
        return attempt;
    }

    /**
     * Declares the incarnation dead; returns the attempts that were in flight, or null if it
     * was already dead (so a loss is counted once, whichever of its reports comes first).
     */
    synchronized List<TaskSpec.Attempt> die() {
        if (!alive) {
            return null;
        }
        alive = false;
        List<TaskSpec.Attempt> lost = new ArrayList<>(inFlight.values());
        inFlight.clear();
        held = 0;
        return lost;
    }

    @Override
    public String toString() {
        return "node " + id + " (" + address + ")";
    }
}
