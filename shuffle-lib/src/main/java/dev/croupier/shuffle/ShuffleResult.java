package dev.croupier.shuffle;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.WaitResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * What {@link ShuffleJob#run} returns as soon as every reduce task is submitted: the outputs in
 * partition order, an iteration in completion order (so a consumer can start on the first
 * partition ready while others are still reducing), and per-phase stats.
 *
 * <p>Thread-safe; {@link #release()} (or {@link #close()}) when done with the outputs.
 */
public final class ShuffleResult<O> implements AutoCloseable {

    private final Cluster cluster;
    private final Strategy strategy;
    private final List<PartitionOutput<O>> outputs;
    private final Supplier<List<PhaseStats>> stats;
    private final long speculativeDuplicates;
    private final long bestEffortFallbacks;
    /** Completes when every output is done; taken at construction, so it outlives released refs. */
    private final CompletableFuture<Void> allDone;
    private final AtomicBoolean released = new AtomicBoolean();

    ShuffleResult(Cluster cluster, Strategy strategy, List<PartitionOutput<O>> outputs,
                  Supplier<List<PhaseStats>> stats, long speculativeDuplicates, long bestEffortFallbacks) {
        this.cluster = cluster;
        this.strategy = strategy;
        this.outputs = List.copyOf(outputs);
        this.stats = stats;
        this.speculativeDuplicates = speculativeDuplicates;
        this.bestEffortFallbacks = bestEffortFallbacks;
        this.allDone = CompletableFuture.allOf(outputs.stream().map(o -> o.ref().whenDone())
                .toArray(CompletableFuture<?>[]::new));
    }

    /** Duplicates launched by speculation (0 unless {@code speculateAfter} was set). */
    public long speculativeDuplicates() {
        return speculativeDuplicates;
    }

    /** Merge tasks cancelled by best-effort merge, whose blocks went to the reducers unmerged. */
    public long bestEffortFallbacks() {
        return bestEffortFallbacks;
    }

    /** The strategy that ran ({@link Strategy#AUTO} resolved). */
    public Strategy strategy() {
        return strategy;
    }

    /** Every output, in partition order (pieces of a split partition in order). */
    public List<PartitionOutput<O>> outputs() {
        return outputs;
    }

    /** The output refs in partition order. */
    public List<ObjectRef<O>> refs() {
        List<ObjectRef<O>> refs = new ArrayList<>(outputs.size());
        for (PartitionOutput<O> o : outputs) {
            refs.add(o.ref());
        }
        return refs;
    }

    /** Waits for and returns every output value, in partition order. */
    public List<O> values() {
        return cluster.get(refs());
    }

    /** The outputs in the order they complete; each {@code next()} blocks until one more is done. */
    public Iterable<PartitionOutput<O>> inCompletionOrder() {
        return () -> new Iterator<>() {
            private final Map<ObjectRef<O>, PartitionOutput<O>> byRef = new IdentityHashMap<>();
            private List<ObjectRef<O>> pending;

            @Override
            public boolean hasNext() {
                if (pending == null) {
                    pending = new ArrayList<>(outputs.size());
                    for (PartitionOutput<O> o : outputs) {
                        byRef.put(o.ref(), o);
                        pending.add(o.ref());
                    }
                }
                return !pending.isEmpty();
            }

            @Override
            public PartitionOutput<O> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                WaitResult<O> w;
                do {
                    w = cluster.wait(pending, 1, Duration.ofSeconds(1));
                } while (w.ready().isEmpty());
                pending = new ArrayList<>(w.pending());
                return byRef.get(w.ready().getFirst());
            }
        };
    }

    /** Per-phase stats; waits until every output is done (also after the outputs were released). */
    public List<PhaseStats> stats() {
        allDone.join();
        return stats.get();
    }

    /**
     * Releases every output ref, once; an output not done yet is released as soon as it is. At
     * once would free it unmade (nothing else wants it), and {@link #stats()}, which waits for
     * every output, would wait forever.
     */
    public void release() {
        if (released.getAndSet(true)) {
            return;
        }
        for (PartitionOutput<O> o : outputs) {
            ObjectRef<O> ref = o.ref();
            if (ref.isDone()) {
                ref.release();
            } else {
                ref.whenDone().thenRun(ref::release);
            }
        }
    }

    @Override
    public void close() {
        release();
    }
}
