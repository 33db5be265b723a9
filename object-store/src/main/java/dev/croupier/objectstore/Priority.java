package dev.croupier.objectstore;

/**
 * Priority of an allocation waiting in the store's allocation queue. Lower ordinal is served
 * first; within one priority, requests are served in arrival order.
 *
 * <p>Thread-safety: immutable enum.
 */
public enum Priority {
    /** A task's output (or an object a running task needs now): served first, may fall back to disk. */
    TASK_OUTPUT,
    /** A restore ahead of need (arguments of queued tasks): served only when no task output waits. */
    PREFETCH
}
