package dev.croupier.futures.internal;

import dev.croupier.futures.ClusterStats;
import dev.croupier.objectstore.ObjectId;
import java.util.List;

/**
 * The node protocol as the owner speaks it: ids and payloads to nodes, outcomes back. Two
 * implementations: {@link EmbeddedBackend} (node runtimes in this JVM, optionally encoding
 * every message exactly as the wire does) and {@link ProcessBackend} (node processes over
 * gRPC). The owner ({@link OwnerCluster}) holds all job state and is the same over both.
 *
 * <p>Calls that send ({@link #dispatch}, {@link #cancel}, {@link #free}) do not wait for the
 * node and may be batched; a node that dies meanwhile is reported through
 * {@link Events#nodeDied}. Implementations are thread-safe.
 */
interface Backend extends AutoCloseable {

    /** What the nodes tell the owner. */
    interface Events {
        /** An attempt's outcome; stale ones (the attempt is no longer in the link) are ignored. */
        void outcome(NodeLink node, AttemptOutcome outcome);

        /**
         * The node incarnation is gone: a crash, a broken stream, or missed heartbeats.
         *
         * @param silentNanos how long before this report the node last said anything: the
         *     time from its loss to its detection, as near as the driver can tell
         */
        void nodeDied(NodeLink node, long silentNanos);

        /**
         * The node is stopping: no new work goes there; what it runs may still finish, and its
         * end is reported by {@link #nodeDied} as any other.
         */
        void nodeDraining(NodeLink node);

        /**
         * A node answers at {@code address}, where the driver has no live node: a name came to
         * resolve to it, or a lost node came back there. The owner picks its id (the lost
         * node's, else a new one) and calls {@code connect} with it, which registers the node
         * and returns its link, or throws if it cannot be reached. Nothing if a live node is
         * there already or the cluster is closed.
         */
        void nodeFound(String address, java.util.function.IntFunction<NodeLink> connect);
    }

    /** Starts or connects the nodes; {@code events} receives every later report. */
    List<NodeLink> start(Events events);

    /** Whether payloads must be encoded (they cross a process boundary, or the mode asks it). */
    boolean encodes();

    /** Starts a new incarnation as node {@code id} (a restart, or a new node). */
    NodeLink startNode(int id);

    /** Ends an incarnation as {@code kill -9} would. */
    void kill(NodeLink node);

    void dispatch(NodeLink node, AttemptCall call);

    void cancel(NodeLink node, long attemptId);

    void free(NodeLink node, ObjectId id);

    /**
     * Opens the node's copy of {@code id} for the driver to decode; null if the node does not
     * have it. Throws {@link IllegalStateException} if the node died under the call.
     */
    NodeStore.Reading read(NodeLink node, ObjectId id) throws InterruptedException;

    /** Stores an encoded value on the node; returns its frame size. */
    long put(NodeLink node, ObjectId id, ValueCodecs.Encoded value) throws InterruptedException;

    /** What the node's store holds and what it has run. */
    ClusterStats.NodeStats stats(NodeLink node);

    /** Capacity of each node's object store in bytes. */
    long objectStoreBytes();

    /** Stops or disconnects every node, waiting (bounded) for interrupted tasks to return. */
    @Override
    void close();
}
