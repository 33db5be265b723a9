package dev.croupier.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.WaitResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Speculative execution of a set of multi-return tasks (the paper's Figure 4, with Spark's
 * trigger): once three quarters of the tasks are done, every task still pending
 * {@code after} since the phase began gets one duplicate. Whichever of the two finishes first
 * wins; the other is cancelled and its refs released, so exactly one output set per task
 * survives. The driver blocks here until every task is decided.
 */
final class Speculation {

    /** Fraction of tasks that must be done before any duplicate is launched. */
    static final double QUANTILE = 0.75;

    private Speculation() {}

    static <B> List<List<ObjectRef<B>>> decide(Cluster cluster, List<List<ObjectRef<B>>> primaries,
                                               IntFunction<List<ObjectRef<B>>> resubmit, Duration after,
                                               AtomicLong duplicatesLaunched) {
        int n = primaries.size();
        long start = System.nanoTime();
        List<List<ObjectRef<B>>> winners = new ArrayList<>(primaries);
        List<List<ObjectRef<B>>> duplicates = new ArrayList<>(n);
        boolean[] decided = new boolean[n];
        int decidedCount = 0;
        for (int i = 0; i < n; i++) {
            duplicates.add(null);
        }
        Map<ObjectRef<B>, Integer> taskOf = new IdentityHashMap<>();
        for (int i = 0; i < n; i++) {
            taskOf.put(primaries.get(i).getFirst(), i);
        }
        while (decidedCount < n) {
            List<ObjectRef<B>> watched = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (!decided[i]) {
                    watched.add(primaries.get(i).getFirst());
                    if (duplicates.get(i) != null) {
                        watched.add(duplicates.get(i).getFirst());
                    }
                }
            }
            WaitResult<B> w = cluster.wait(watched, 1, Duration.ofMillis(20));
            for (ObjectRef<B> ready : w.ready()) {
                int i = taskOf.get(ready);
                if (decided[i]) {
                    continue;
                }
                decided[i] = true;
                decidedCount++;
                boolean primaryWon = ready == primaries.get(i).getFirst();
                List<ObjectRef<B>> loser = primaryWon ? duplicates.get(i) : primaries.get(i);
                winners.set(i, primaryWon ? primaries.get(i) : duplicates.get(i));
                if (loser != null) {
                    cluster.cancel(loser.getFirst());
                    loser.forEach(ObjectRef::release);
                }
            }
            boolean late = System.nanoTime() - start > after.toNanos();
            if (late && decidedCount >= QUANTILE * n) {
                for (int i = 0; i < n; i++) {
                    if (!decided[i] && duplicates.get(i) == null) {
                        List<ObjectRef<B>> dup = resubmit.apply(i);
                        duplicates.set(i, dup);
                        taskOf.put(dup.getFirst(), i);
                        duplicatesLaunched.incrementAndGet();
                    }
                }
            }
        }
        return winners;
    }
}
