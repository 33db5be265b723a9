package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The phases of one shuffle run (map, merge, split, reduce) as {@link PhaseStats} report them:
 * each phase's clock runs from its first task's submission to its last task's completion, and
 * counts its tasks and the bytes they returned. Thread-safe: tasks are tracked by the driver
 * thread and complete on the runtime's threads.
 */
final class Phases {
    private final Map<String, Phase> byName = new LinkedHashMap<>();

    /** Tasks whose bytes are not counted yet, by their first output. */
    private final ConcurrentHashMap<ObjectRef<?>, Tracked> uncounted = new ConcurrentHashMap<>();

    private record Tracked(Phase phase, List<? extends ObjectRef<?>> outputs) {}

    /**
     * Counts a task of phase {@code name}, whose clock starts at its first tracked task, and the
     * bytes of {@code outputs}, outputs of that one task: one callback for the task, on its first
     * output, since the runtime settles a task's outputs together (a waiter on one finds the
     * others settled). A callback per output was a future per object: with 100 outputs a map,
     * two fifths of the driver's work submitting the 100 TB graph's maps (docs/benchmarks.md).
     * The callback runs before the waiters of tasks submitted while the outputs were pending, so
     * none of those can have freed them; a task submitted once they were done may run, and
     * free them, before the thread that settled them reaches the callback, so whoever drops
     * the driver's claim on them calls {@link #countIfDone} first.
     */
    void track(String name, List<? extends ObjectRef<?>> outputs) {
        Phase phase;
        synchronized (this) {
            phase = byName.computeIfAbsent(name, n -> new Phase(n, System.nanoTime()));
        }
        phase.addTask();
        if (outputs.isEmpty()) {
            return;
        }
        ObjectRef<?> first = outputs.getFirst();
        uncounted.put(first, new Tracked(phase, outputs));
        first.whenDone().thenRun(() -> count(first));
    }

    /**
     * Counts the bytes of the tracked task whose outputs are {@code outputs} now, if they are
     * done and not counted yet; the caller still holds them. Call before releasing them.
     */
    void countIfDone(List<? extends ObjectRef<?>> outputs) {
        if (!outputs.isEmpty() && outputs.getFirst().isDone()) {
            count(outputs.getFirst());
        }
    }

    /** Counts the task whose first output is {@code first}, once. */
    private void count(ObjectRef<?> first) {
        Tracked task = uncounted.remove(first);
        if (task == null) {
            return;
        }
        long bytes = 0;
        for (ObjectRef<?> ref : task.outputs) {
            bytes += Math.max(0, ref.byteSize());
        }
        task.phase.done(bytes);
    }

    /** The phases so far, in the order they began. */
    synchronized List<PhaseStats> stats() {
        List<PhaseStats> out = new ArrayList<>(byName.size());
        for (Phase p : byName.values()) {
            out.add(p.snapshot());
        }
        return out;
    }

    private static final class Phase {
        final String name;
        final long start;
        private int tasks;
        private long end;
        private long bytes;

        Phase(String name, long start) {
            this.name = name;
            this.start = start;
        }

        synchronized void addTask() {
            tasks++;
        }

        synchronized void done(long bytesOut) {
            end = Math.max(end, System.nanoTime());
            bytes += bytesOut;
        }

        synchronized PhaseStats snapshot() {
            return new PhaseStats(name, tasks, end == 0 ? 0 : (end - start) / 1e9, bytes);
        }
    }
}
