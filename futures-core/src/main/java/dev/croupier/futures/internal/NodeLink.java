package dev.croupier.futures.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The owner's view of one node incarnation: its id, CPU slots and address, whether the owner
 * still counts it alive, and the attempts dispatched to it that have not reported back.
 *
 * <p>Design: the owner knows a node only through this link and its {@link Backend}; which
 * process, thread pool or network is behind it is the backend's business. The in-flight table
 * is the owner's truth about where an attempt runs: an outcome whose attempt is no longer in it
 * (the node was declared dead, or the attempt was cancelled) is stale and ignored, which is how
 * a late message from a node declared dead loses its power. A restarted node is a new link; a
 * reference to an old one (say, as an object's location) is simply dead. Thread-safe: the
 * table is guarded by the link's monitor.
 */
final class NodeLink {

    final int id;
    final int cpus;
    /** Where the node's services are ({@code host:port}); a name for the embedded backend. */
    final String address;
    private final Map<Long, TaskSpec.Attempt> inFlight = new HashMap<>();
    private volatile boolean alive = true;

    NodeLink(int id, int cpus, String address) {
        this.id = id;
        this.cpus = cpus;
        this.address = address;
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
    synchronized double load() {
        return inFlight.size() / (double) cpus;
    }

    /** Records a dispatch; false if the node is dead. */
    synchronized boolean add(TaskSpec.Attempt attempt) {
        if (!alive) {
            return false;
        }
        inFlight.put(attempt.id, attempt);
        return true;
    }

    /** Takes the attempt an outcome or a cancel names; null if stale. */
    synchronized TaskSpec.Attempt remove(long attemptId) {
        return inFlight.remove(attemptId);
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
        return lost;
    }

    synchronized int inFlight() {
        return inFlight.size();
    }

    @Override
    public String toString() {
        return "node " + id + " (" + address + ")";
    }
}
