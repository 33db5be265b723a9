package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;

/**
 * The node protocol's reply: what became of one attempt, with what it cost. The wire form is
 * the {@code Outcome} message of {@code common.proto}.
 *
 * @param sizes COMPLETED: each output's frame size; else empty
 * @param error FAILED: the task's exception (or a {@link RemoteTaskError} standing for it)
 * @param lost ARGUMENT_LOST: the argument found on none of its locations
 * @param copies arguments the node pulled from other nodes and now also holds
 * @param values COMPLETED: the frame of each output returned inline (the session's small
 *     values, which the owner keeps), null for outputs the node stores; else empty
 */
record AttemptOutcome(long attemptId, Kind kind, long[] sizes, Throwable error, ObjectId lost, ObjectId[] copies,
                      long queueNanos, long wallNanos, long cpuNanos, long bytesIn, long bytesOut, byte[][] values) {

    enum Kind { COMPLETED, FAILED, ARGUMENT_LOST }

    static final long[] NO_SIZES = new long[0];
    static final ObjectId[] NO_COPIES = new ObjectId[0];
    static final byte[][] NO_VALUES = new byte[0][];
}
