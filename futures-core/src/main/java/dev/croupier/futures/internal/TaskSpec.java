package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.ObjectRef;
import java.io.Serializable;

/**
 * One submitted task, as its owner keeps it: what to run, on what, where, and its lineage
 * role. The same spec is run again (a new {@link Attempt}) after its node dies or to rebuild a
 * lost output.
 *
 * <p>Mutable fields are guarded by the spec's monitor. State machine (the owner does not see
 * a dispatched attempt start: queued and running are one state to it):
 * <pre>
 *   WAITING --deps available--> DISPATCHED --outcome: completed--> DONE
 *      ^                           |                                 |
 *      +--- node died / argument lost / failed and retried / rebuild -+
 *   any state but DONE --cancel--> CANCELLED;  failure --> FAILED
 * </pre>
 */
final class TaskSpec {

    enum State { WAITING, DISPATCHED, DONE, FAILED, CANCELLED }

    /** The user function adapted to an argument array. */
    @FunctionalInterface
    interface Invocation extends Serializable {
        Object invoke(Object[] args) throws Exception;
    }

    final long taskId;
    final String name;
    /** The {@link Invocation}, as the backend carries it. */
    final Payload function;
    /** The class holding the function's code, for nodes in other JVMs to check; else null. */
    final CodeFingerprint code;
    /**
     * Arguments: a plain value as a payload, a ref as its entry, a ref list as an array of
     * entries; no ref, so that refs the caller dropped are collected (but see
     * {@link #putArguments}).
     */
    final Object[] args;
    /** Every entry the arguments depend on, once each. */
    final OwnedObject[] deps;
    /**
     * The refs among the arguments to objects made by {@code put}, or null if none. Never read:
     * it keeps them reachable, and with them their values, for as long as the spec's lineage
     * may run it again, since a put object cannot be rebuilt. (Entries made by tasks need no
     * ref: their creators rebuild them.)
     */
    final ObjectRef<?>[] putArguments;
    /** Return values; length 1 unless numReturns was set. */
    OwnedObject[] outputs;
    final boolean multiReturn;
    final int affinityNode;
    final Affinity affinity;
    final int maxRetries;
    final boolean retryExceptions;
    final int cpus;

    // guarded by this
    State state = State.WAITING;
    /** Executions started or resubmitted beyond the first. */
    int retries;
    /** Dependencies still to arrive in the current submission. */
    int pendingDeps;
    /** Bumped on every (re)submission so stale dependency callbacks are ignored. */
    int generation;
    Attempt current;

    TaskSpec(long taskId, String name, Payload function, CodeFingerprint code, Object[] args, OwnedObject[] deps,
             ObjectRef<?>[] putArguments, boolean multiReturn, int affinityNode,
             Affinity affinity, int maxRetries, boolean retryExceptions, int cpus) {
        this.taskId = taskId;
        this.name = name;
        this.function = function;
        this.code = code;
        this.args = args;
        this.deps = deps;
        this.putArguments = putArguments;
        this.multiReturn = multiReturn;
        this.affinityNode = affinityNode;
        this.affinity = affinity;
        this.maxRetries = maxRetries;
        this.retryExceptions = retryExceptions;
        this.cpus = cpus;
    }

    /** Whether the task runs only on its affinity node. */
    boolean pinnedToNode() {
        return affinity == Affinity.HARD && affinityNode >= 0;
    }

    synchronized boolean isFinished() {
        return state == State.DONE || state == State.FAILED || state == State.CANCELLED;
    }

    /**
     * A spec ready to run in its {@code generation}, waiting for a node with room; {@code seq}
     * orders the waiting tasks by when they became ready.
     */
    record Ready(TaskSpec spec, int generation, long seq) {}

    /** One execution of a spec on one node; its id names it in the node protocol. */
    static final class Attempt {
        final long id;
        final TaskSpec spec;
        final NodeLink node;
        /** What was sent; set before the attempt is dispatched. */
        AttemptCall call;

        Attempt(long id, TaskSpec spec, NodeLink node) {
            this.id = id;
            this.spec = spec;
            this.node = node;
        }
    }

    @Override
    public String toString() {
        return "task '" + name + "' #" + taskId;
    }
}
