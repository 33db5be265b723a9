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

    /** Tasks whose bytes are not counted yet, by their last output. */
    private final ConcurrentHashMap<ObjectRef<?>, Tracked> uncounted = new ConcurrentHashMap<>();

    private record Tracked(Phase phase, List<? extends ObjectRef<?>> outputs) {}

    /**
     * Counts a task of phase {@code name}, whose clock starts at its first tracked task, and the
     * bytes of {@code outputs}, outputs of that one task: one callback for the task, on its last
     * output, since the runtime marks a task's outputs done in order (once the last is, all
     * are, and a ref keeps its size after the object is freed). A callback per output was a
     * future per object: with 100 outputs a map, two fifths of the driver's work submitting the
     * 100 TB graph's maps (docs/benchmarks.md).
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
        ObjectRef<?> last = outputs.getLast();
        uncounted.put(last, new Tracked(phase, outputs));
        last.whenDone().thenRun(() -> count(last));
    }

    /**
     * Counts the task whose last output is {@code last}, once. Two threads may sum its bytes
     * (its callback, and {@link #stats}); the one that takes it off the list adds them, under
     * the monitor {@link #stats} reads under, so that a look at the stats never falls between
     * the taking and the adding.
     */
    private void count(ObjectRef<?> last) {
        Tracked task = uncounted.get(last);
        if (task == null) {
            return;
        }
        long bytes = 0;
        for (ObjectRef<?> ref : task.outputs) {
            bytes += Math.max(0, ref.byteSize()); // -1: freed before it was made, no bytes
        }
        synchronized (this) {
            if (uncounted.remove(last) != null) {
                task.phase.done(bytes);
            }
        }
    }

    /**
     * The phases so far, in the order they began, with every task whose outputs are done
     * counted: a caller who has seen the job's outputs done may get here before the thread that
     * settled the last of them has run their callbacks.
     */
    synchronized List<PhaseStats> stats() {
        for (ObjectRef<?> last : uncounted.keySet()) {
            if (last.byteSize() >= 0) {
                count(last);
            }
        }
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
