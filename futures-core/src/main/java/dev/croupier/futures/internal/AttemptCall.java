package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;

/**
 * The node protocol's dispatch: one attempt of a task, in ids and payloads only. The wire form
 * is the {@code Attempt} message of {@code common.proto}; {@link WireCodec} converts.
 *
 * @param attemptId unique within the owner's session; outcomes and cancels name it
 * @param name the task's name, for stats and messages
 * @param cpus CPU slots the attempt takes
 * @param function the task's {@link TaskSpec.Invocation}
 * @param args each a {@link Payload} (a plain value), a {@link Ref} or a {@link RefList}
 * @param outputs the ids the results are stored under
 * @param multiReturn whether the function returns a list of {@code outputs.length} values
 * @param code the class holding the function's code and its digest, where the node is another
 *     JVM that must hold the same bytes; else null
 */
record AttemptCall(long attemptId, String name, int cpus, Payload function, Object[] args, ObjectId[] outputs,
                   boolean multiReturn, CodeFingerprint code) {

    /** The argument ref to {@code id}; throws if the call reads no such object. */
    Ref refTo(ObjectId id) {
        for (Object arg : args) {
            if (arg instanceof Ref ref && ref.id().equals(id)) {
                return ref;
            }
            if (arg instanceof RefList list) {
                for (Ref ref : list.refs()) {
                    if (ref.id().equals(id)) {
                        return ref;
                    }
                }
            }
        }
        throw new IllegalArgumentException("task '" + name + "' reads no object " + id);
    }

    /**
     * An object argument and where the owner knows copies to be.
     *
     * @param nodes ids of node incarnations holding a copy, in the owner's session
     * @param inline the value's frame when the owner holds it (a small value); else null
     */
    record Ref(ObjectId id, long size, int[] nodes, byte[] inline) {}

    /** Refs that arrive as one {@code List} of their values. */
    record RefList(Ref[] refs) {}
}
