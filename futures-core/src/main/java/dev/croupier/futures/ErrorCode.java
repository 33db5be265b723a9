package dev.croupier.futures;

/** The small set of reasons a runtime call fails; every {@link CroupierException} carries one. */
public enum ErrorCode {
    /** A task threw; the message names the task and the node, the cause is the task's exception. */
    TASK_FAILED,
    /** A task was cancelled, or depends on one that was. */
    CANCELLED,
    /** An object is gone from every node and cannot be rebuilt (it was made by {@code put}). */
    OBJECT_LOST,
    /** A bounded wait ran out. */
    TIMEOUT,
    /** A value could not be encoded or decoded (for example a class not on the allow-list). */
    CODEC,
    /** An argument or setting is out of range; the message names it. */
    BAD_INPUT,
    /** The cluster was closed while the call was in flight. */
    CLOSED,
    /** A node cannot be reached, refused the driver, or could not start; the message names its address. */
    UNAVAILABLE
}
