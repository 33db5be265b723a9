package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One driver's session on a node: how its values decode, where its outcomes go, how its
 * arguments are pulled from other nodes, and its attempts on this node. Two drivers on one
 * node have two sessions; their object ids never meet, since each id's high half is its
 * session's tag. Thread-safe.
 */
final class NodeSession {

    /** Where a session's outcomes go: the owner's link to this node. */
    @FunctionalInterface
    interface Reports {
        void report(NodeRuntime node, AttemptCall call, AttemptOutcome outcome);
    }

    /** How a node reads an argument another node of the session holds. */
    @FunctionalInterface
    interface Peers {
        /**
         * Copies object {@code id} from node {@code source} (an id of the session) into
         * {@code into}. Returns the bytes copied, or -1 if that node does not have it, is dead
         * or cannot be reached.
         */
        long pull(ObjectId id, int source, NodeStore into) throws InterruptedException;

        /**
         * Node {@code source}'s runtime when it runs in this process and its objects are read
         * in place: an argument it holds is then pinned in its store for the attempt and read
         * there, with no copy (the embedded backend, unless it serializes as the wire does).
         * Null where nodes are apart.
         */
        default NodeRuntime inProcess(int source) {
            return null;
        }

        /**
         * Starts borrowing objects {@code ids} where node {@code source} holds them, on this
         * host, to be read in place for an attempt: one loan per id, in order, all on one call
         * ({@link SameHost.Loan}); null where they must be copied.
         */
        default List<SameHost.Loan> borrow(List<ObjectId> ids, int source) {
            return null;
        }

        /** Whether node {@code source}'s objects may be borrowed rather than copied ahead. */
        default boolean mayLend(int source) {
            return false;
        }
    }

    final long tag;
    /** This node's id in the session. */
    final int self;
    /**
     * Outputs whose frames are smaller than this go back inline with the outcome and live with
     * the owner, not on this node (0: none; a driver sharing this JVM reads the node's memory).
     */
    final int inlineBelow;
    final ValueCodecs codecs;
    final Reports reports;
    final Peers peers;
    /** Decoded stateless functions by their bytes; bounded, since a session may send many. */
    private final ConcurrentHashMap<java.nio.ByteBuffer, Object> functions = new ConcurrentHashMap<>();
    private static final int MAX_FUNCTIONS = 1024;

    /** The attempt's function, decoded once per distinct stateless body. */
    Object function(Payload payload) {
        if (!(payload instanceof Payload.Encoded encoded) || !encoded.stateless()) {
            return payload.open(codecs);
        }
        java.nio.ByteBuffer key = java.nio.ByteBuffer.wrap(encoded.frame());
        Object fn = functions.get(key);
        if (fn == null) {
            fn = payload.open(codecs);
            if (functions.size() >= MAX_FUNCTIONS) {
                functions.clear();
            }
            functions.put(key, fn);
        }
        return fn;
    }

    /** Queued and running attempts by id; an outcome is reported only for an attempt still here. */
    final ConcurrentHashMap<Long, NodeRuntime.Running> attempts = new ConcurrentHashMap<>();

    NodeSession(long tag, int self, int inlineBelow, ValueCodecs codecs, Reports reports, Peers peers) {
        this.tag = tag;
        this.self = self;
        this.inlineBelow = inlineBelow;
        this.codecs = codecs;
        this.reports = reports;
        this.peers = peers;
    }
}
