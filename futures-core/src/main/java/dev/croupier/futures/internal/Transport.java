package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;

/**
 * The node-to-node boundary: everything that crosses between nodes goes through here, so a
 * process cluster can put gRPC behind the same calls. The embedded cluster's implementation,
 * {@link LocalTransport}, calls the other node directly.
 *
 * <p>Implementations are thread-safe.
 */
interface Transport {

    /** Hands an attempt to its node's queue; returns false if the node is dead. */
    boolean dispatch(TaskSpec.Attempt attempt);

    /**
     * Copies object {@code id} from {@code from}'s store into {@code to}'s store. Returns the
     * bytes copied, or -1 if {@code from} no longer has it (it died or freed it).
     */
    long fetch(ObjectId id, Node from, Node to) throws InterruptedException;
}
