package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.WaitResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.List;

/**
 * {@code Cluster.wait}: a callback on each pending entry counts it settled and wakes the waiter
 * once enough are; the done refs are ordered by the entries' completion sequence numbers,
 * which the owner assigns when an entry settles, one per task (its outputs settle together),
 * and refs of the same number keep the order they were given in. Stateless.
 */
final class Waits {

    private Waits() {}

    static <T> WaitResult<T> await(List<OwnedRef<T>> locals, int numReady, Duration timeout) {
        // Settled refs are counted by their callbacks, so a wait on n refs costs O(n), not a
        // rescan of all n on every settle.
        AtomicInteger settled = new AtomicInteger();
        Object signal = new Object();
        Runnable wake = () -> {
            if (settled.incrementAndGet() >= numReady) {
                synchronized (signal) {
                    signal.notifyAll();
                }
            }
        };
        for (OwnedRef<T> ref : locals) {
            if (ref.entry.isDone()) {
                settled.incrementAndGet();
            } else {
                ref.entry.whenSettled(wake);
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (signal) {
            while (settled.get() < numReady) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    signal.wait(Math.max(1, Math.min(left / 1_000_000, 100)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CroupierException(ErrorCode.CANCELLED, "interrupted in wait", e);
                }
            }
        }
        List<OwnedRef<T>> done = new ArrayList<>();
        for (OwnedRef<T> ref : locals) {
            if (ref.entry.isDone()) {
                done.add(ref);
            }
        }
        done.sort(Comparator.comparingLong(r -> r.entry.completionSeq()));
        List<ObjectRef<T>> ready = new ArrayList<>(done.subList(0, Math.min(numReady, done.size())));
        Set<ObjectRef<T>> isReady = Collections.newSetFromMap(new IdentityHashMap<>());
        isReady.addAll(ready);
        List<ObjectRef<T>> pending = new ArrayList<>(locals.size() - ready.size());
        for (OwnedRef<T> ref : locals) {
            if (!isReady.contains(ref)) {
                pending.add(ref);
            }
        }
        return new WaitResult<>(ready, pending);
    }
}
