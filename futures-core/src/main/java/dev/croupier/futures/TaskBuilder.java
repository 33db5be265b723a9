package dev.croupier.futures;

import java.util.List;

/**
 * Options of one task invocation, ended by {@link #remote()}. Made by {@link Cluster#task};
 * used by one thread, once.
 */
public interface TaskBuilder<R> {

    /** Default number of re-executions after node failures or for lineage reconstruction. */
    int DEFAULT_MAX_RETRIES = 3;

    /** A name for stats and errors; defaults to the function's class name. */
    TaskBuilder<R> name(String name);

    /** Runs on {@code nodeId}: only there ({@link Affinity#HARD}) or there if alive ({@link Affinity#SOFT}). */
    TaskBuilder<R> onNode(int nodeId, Affinity affinity);

    /**
     * How many times the task may be run again after its node died or its output was lost
     * (default {@value #DEFAULT_MAX_RETRIES}); with {@link #retryExceptions(boolean)} also
     * after it threw.
     */
    TaskBuilder<R> maxRetries(int retries);

    /** Whether an exception thrown by the task counts as retryable (default false). */
    TaskBuilder<R> retryExceptions(boolean retry);

    /** CPU slots the task holds on its node while it runs (default 1). */
    TaskBuilder<R> cpus(int cpus);

    /**
     * The function returns a {@code List} of exactly {@code k} values; each becomes an object
     * of its own. Returns a builder whose {@code remote()} gives the k refs.
     */
    <T> MultiReturnTaskBuilder<T> numReturns(int k);

    /** Submits the task; returns at once with the ref of its value. */
    ObjectRef<R> remote();

    /** Options of a task with several return values; see {@link TaskBuilder#numReturns(int)}. */
    interface MultiReturnTaskBuilder<T> {
        /** Submits the task; returns at once with one ref for each of its values. */
        List<ObjectRef<T>> remote();
    }
}
