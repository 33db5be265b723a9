package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;
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
        void report(NodeRuntime node, AttemptOutcome outcome);
    }

    /** How a node gets a copy of an argument another node of the session holds. */
    @FunctionalInterface
    interface Peers {
        /**
         * Copies object {@code id} from node {@code source} (an id of the session) into
         * {@code into}. Returns the bytes copied, or -1 if that node does not have it, is dead
         * or cannot be reached.
         */
        long pull(ObjectId id, int source, NodeStore into) throws InterruptedException;
    }

    final long tag;
    /** This node's id in the session. */
    final int self;
    final ValueCodecs codecs;
    final Reports reports;
    final Peers peers;
    /** Queued and running attempts by id; an outcome is reported only for an attempt still here. */
    final ConcurrentHashMap<Long, NodeRuntime.Running> attempts = new ConcurrentHashMap<>();

    NodeSession(long tag, int self, ValueCodecs codecs, Reports reports, Peers peers) {
        this.tag = tag;
        this.self = self;
        this.codecs = codecs;
        this.reports = reports;
        this.peers = peers;
    }
}
