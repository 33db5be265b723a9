package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Chooses the node of a task whose arguments are ready: the one it prefers, if any, else the
 * least loaded. Reads node loads and object locations without locking them together: a
 * placement may be slightly stale, never wrong (a dead choice is retried by the caller).
 * Thread-safe.
 */
final class Placement {

    private final List<NodeLink> nodes;
    /** Argument bytes on a node that make it worth running a task there: one store-sized object. */
    private final long localBytes;
    private final AtomicInteger roundRobin = new AtomicInteger();

    /** {@code nodes} is the cluster's live list (index = node id), read on every call. */
    Placement(List<NodeLink> nodes, int smallObjectBytes) {
        this.nodes = nodes;
        this.localBytes = Math.max(1, smallObjectBytes);
    }

    /**
     * The node a ready task waits for, or null when any node will do: its affinity node (with
     * hard affinity whether alive or not, and the caller fails it if not; with soft affinity if
     * it takes work and has the CPU slots the task asks for), else the node holding the most
     * argument bytes (only when that is at least one store-sized object: moving small values is
     * cheaper than piling work onto one node).
     */
    NodeLink preferred(TaskSpec spec) {
        if (spec.affinityNode >= 0) {
            NodeLink n = spec.affinityNode < nodes.size() ? nodes.get(spec.affinityNode) : null;
            if (spec.affinity == Affinity.HARD) {
                return n;
            }
            if (n != null && n.cpus >= spec.cpus && n.placeable()) {
                return n;
            }
        }
        if (spec.deps.length == 0) {
            return null;
        }
        Map<NodeLink, Long> bytes = new HashMap<>();
        for (OwnedObject dep : spec.deps) {
            dep.addSizeTo(bytes);
        }
        NodeLink best = null;
        long bestBytes = localBytes - 1;
        for (Map.Entry<NodeLink, Long> e : bytes.entrySet()) {
            if (e.getKey().cpus < spec.cpus) {
                continue;
            }
            if (e.getValue() > bestBytes || e.getValue() == bestBytes && best != null && e.getKey().load() < best.load()) {
                best = e.getKey();
                bestBytes = e.getValue();
            }
        }
        return best;
    }

    /**
     * Whether {@code node} holds at least one store-sized object of the task's arguments, the
     * measure {@link #preferred} uses: moving the task would move them.
     */
    boolean holdsArguments(TaskSpec spec, NodeLink node) {
        long bytes = 0;
        for (OwnedObject dep : spec.deps) {
            if (dep.isLocatedOn(node)) {
                bytes += dep.size();
                if (bytes >= localBytes) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The least loaded node that takes work, or null. */
    NodeLink leastLoaded() {
        return leastLoaded(1);
    }

    /** The least loaded node that takes work and has {@code cpus} CPU slots, or null. */
    NodeLink leastLoaded(int cpus) {
        int size = nodes.size();
        int start = Math.floorMod(roundRobin.getAndIncrement(), size);
        NodeLink best = null;
        double bestLoad = Double.MAX_VALUE;
        for (int i = 0; i < size; i++) {
            NodeLink n = nodes.get((start + i) % size);
            if (n.placeable() && n.cpus >= cpus) {
                double load = n.load();
                if (load < bestLoad) {
                    best = n;
                    bestLoad = load;
                }
            }
        }
        return best;
    }
}
