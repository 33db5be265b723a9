package dev.croupier.futures.internal;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Runs completion callbacks without recursion: a callback that settles more entries queues
 * their callbacks on the same thread instead of calling them, so a chain of a thousand
 * dependent tasks failing or completing never deepens the stack. Thread-confined state only.
 */
final class Trampoline {

    private static final ThreadLocal<ArrayDeque<Runnable>> QUEUE = new ThreadLocal<>();

    private Trampoline() {}

    /** Runs waiters; nested calls on the same thread queue instead of recursing. */
    static void runAll(List<Runnable> waiters) {
        if (waiters == null || waiters.isEmpty()) {
            return;
        }
        ArrayDeque<Runnable> queue = QUEUE.get();
        if (queue != null) {
            queue.addAll(waiters);
            return;
        }
        queue = new ArrayDeque<>(waiters);
        QUEUE.set(queue);
        drain(queue);
    }

    /**
     * Runs {@code settle}, which settles several entries, with every waiter it releases queued
     * until it returns, then {@code after} behind them: so a waiter of one entry finds the
     * others settled, and {@code after} runs once the waiters have. Nested in a running
     * {@link #runAll}, all of it queues behind what that call has queued.
     */
    static void settleTogether(Runnable settle, Runnable after) {
        ArrayDeque<Runnable> queue = QUEUE.get();
        boolean outer = queue == null;
        if (outer) {
            queue = new ArrayDeque<>();
            QUEUE.set(queue);
        }
        RuntimeException failed = null;
        try {
            settle.run();
        } catch (RuntimeException e) {
            failed = e; // what it settled before failing still wakes its waiters, then after
        } catch (Error e) {
            if (outer) {
                QUEUE.remove();
            }
            throw e;
        }
        queue.add(after);
        if (outer) {
            try {
                drain(queue);
            } catch (RuntimeException e) {
                failed = firstOf(failed, e);
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Runs the queue to its end, then drops it; throws the first waiter's failure, if any. */
    private static void drain(ArrayDeque<Runnable> queue) {
        RuntimeException first = null;
        try {
            Runnable r;
            while ((r = queue.poll()) != null) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    // Every waiter must run, or the tasks behind it would wait forever.
                    first = firstOf(first, e);
                }
            }
        } finally {
            QUEUE.remove();
        }
        if (first != null) {
            throw first;
        }
    }

    /** {@code next} if it is the first failure, else {@code first} carrying {@code next} as suppressed. */
    private static RuntimeException firstOf(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
