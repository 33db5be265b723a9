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
        RuntimeException first = null;
        try {
            Runnable r;
            while ((r = queue.poll()) != null) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    // Every waiter must run, or the tasks behind it would wait forever.
                    if (first == null) {
                        first = e;
                    } else {
                        first.addSuppressed(e);
                    }
                }
            }
        } finally {
            QUEUE.remove();
        }
        if (first != null) {
            throw first;
        }
    }
}
