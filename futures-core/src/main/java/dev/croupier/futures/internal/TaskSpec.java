package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import java.io.Serializable;

/**
 * One submitted task: what to run, on what, where, and its lineage role. The same spec is
 * run again (a new {@link Attempt}) after its node dies or to rebuild a lost output.
 *
 * <p>Mutable fields are guarded by the spec's monitor. State machine:
 * <pre>
 *   WAITING --deps available--> QUEUED --slot free--> RUNNING --> DONE
 *      ^                           |                     |           |
 *      +------- node died / argument lost / rebuild -----+-----------+
 *   any state but DONE --cancel--> CANCELLED;  failure --> FAILED
 * </pre>
 */
final class TaskSpec {

    enum State { WAITING, QUEUED, RUNNING, DONE, FAILED, CANCELLED }

    /** The user function adapted to an argument array. */
    @FunctionalInterface
    interface Invocation extends Serializable {
        Object invoke(Object[] args) throws Exception;
    }

    final long taskId;
    final String name;
    final Invocation invocation;
    /** Arguments as given: plain values, refs, and ref lists. */
    final Object[] args;
    /** Every entry the arguments depend on, once each. */
    final ObjectEntry[] deps;
    /** Return values; length 1 unless numReturns was set. */
    ObjectEntry[] outputs;
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

    TaskSpec(long taskId, String name, Invocation invocation, Object[] args, ObjectEntry[] deps,
             boolean multiReturn, int affinityNode, Affinity affinity, int maxRetries,
             boolean retryExceptions, int cpus) {
        this.taskId = taskId;
        this.name = name;
        this.invocation = invocation;
        this.args = args;
        this.deps = deps;
        this.multiReturn = multiReturn;
        this.affinityNode = affinityNode;
        this.affinity = affinity;
        this.maxRetries = maxRetries;
        this.retryExceptions = retryExceptions;
        this.cpus = cpus;
    }

    synchronized boolean isFinished() {
        return state == State.DONE || state == State.FAILED || state == State.CANCELLED;
    }

    /** One execution of a spec on one node. */
    static final class Attempt {
        final TaskSpec spec;
        final Node node;
        final long readyNanos;
        /** Thread running it; set and cleared under the spec's monitor, so cancel interrupts only this run. */
        Thread runner;
        /** Whether its node has asked the store to restore its spilled arguments; under the node's monitor. */
        boolean prefetched;

        Attempt(TaskSpec spec, Node node, long readyNanos) {
            this.spec = spec;
            this.node = node;
            this.readyNanos = readyNanos;
        }
    }

    @Override
    public String toString() {
        return "task '" + name + "' #" + taskId;
    }
}
