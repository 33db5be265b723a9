package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Chooses the node of a task whose arguments are ready. Reads node loads and object locations
 * without locking them together: a placement may be slightly stale, never wrong (a dead choice
 * is retried by the caller). Thread-safe.
 */
final class Placement {

    private final List<NodeLink> nodes;
    private final int smallObjectBytes;
    private final AtomicInteger roundRobin = new AtomicInteger();

    /** {@code nodes} is the cluster's live list (index = node id), read on every call. */
    Placement(List<NodeLink> nodes, int smallObjectBytes) {
        this.nodes = nodes;
        this.smallObjectBytes = smallObjectBytes;
    }

    /**
     * Placement: hard affinity, then soft affinity, then the node holding the most argument
     * bytes (only when that is at least one store-sized object: moving small values is cheaper
     * than piling work onto one node), then the least loaded node; always a node with the CPU
     * slots the task asks for (nodes started by hand may have fewer), where it would otherwise
     * wait in the node's queue forever. Null when there is none.
     */
    NodeLink place(TaskSpec spec) {
        if (spec.affinityNode >= 0) {
            NodeLink n = spec.affinityNode < nodes.size() ? nodes.get(spec.affinityNode) : null;
            // a draining node still takes what must run there; it may finish before it stops
            if (n != null && n.cpus >= spec.cpus && (spec.affinity == Affinity.HARD ? n.alive() : n.placeable())) {
                return n;
            }
            if (spec.affinity == Affinity.HARD) {
                return null;
            }
        }
        if (spec.deps.length > 0) {
            Map<NodeLink, Long> bytes = new HashMap<>();
            for (OwnedObject dep : spec.deps) {
                dep.addSizeTo(bytes);
            }
            NodeLink best = null;
            long bestBytes = Math.max(1, smallObjectBytes) - 1;
            for (Map.Entry<NodeLink, Long> e : bytes.entrySet()) {
                if (e.getKey().cpus < spec.cpus) {
                    continue;
                }
                if (e.getValue() > bestBytes || e.getValue() == bestBytes && best != null && e.getKey().load() < best.load()) {
                    best = e.getKey();
                    bestBytes = e.getValue();
                }
            }
            if (best != null) {
                return best;
            }
        }
        return leastLoaded(spec.cpus);
    }

    /** The least loaded node that takes work, or null. */
    NodeLink leastLoaded() {
        return leastLoaded(1);
    }

    private NodeLink leastLoaded(int cpus) {
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
