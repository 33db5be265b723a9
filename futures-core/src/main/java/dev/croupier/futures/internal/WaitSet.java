package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.WaitResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * {@code Cluster.wait}: one monitor woken by a callback on each pending entry; the done refs
 * are ordered by the entries' completion sequence numbers, which the owner assigns when an
 * entry settles. Stateless.
 */
final class WaitSet {

    private WaitSet() {}

    static <T> WaitResult<T> await(List<OwnedRef<T>> locals, int numReady, Duration timeout) {
        Object signal = new Object();
        Runnable wake = () -> {
            synchronized (signal) {
                signal.notifyAll();
            }
        };
        for (OwnedRef<T> ref : locals) {
            if (!ref.entry.isDone()) {
                ref.entry.whenSettled(wake);
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (signal) {
            while (countDone(locals) < numReady) {
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
        List<ObjectRef<T>> pending = new ArrayList<>(locals.size() - ready.size());
        for (OwnedRef<T> ref : locals) {
            if (!ready.contains(ref)) {
                pending.add(ref);
            }
        }
        return new WaitResult<>(ready, pending);
    }

    private static int countDone(List<? extends OwnedRef<?>> refs) {
        int n = 0;
        for (OwnedRef<?> r : refs) {
            if (r.entry.isDone()) {
                n++;
            }
        }
        return n;
    }
}
