package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The phases of one shuffle run (map, merge, split, reduce) as {@link PhaseStats} report them:
 * each phase's clock runs from its first task's submission to its last task's completion, and
 * counts its tasks and the bytes they returned. Thread-safe: tasks are tracked by the driver
 * thread and complete on the runtime's threads.
 */
final class Phases {
    private final Map<String, Phase> byName = new LinkedHashMap<>();

    /** Counts {@code refs} in phase {@code name}, whose clock starts at its first tracked task. */
    synchronized void track(String name, List<? extends ObjectRef<?>> refs) {
        Phase phase = byName.computeIfAbsent(name, n -> new Phase(n, System.nanoTime()));
        phase.addTask();
        for (ObjectRef<?> ref : refs) {
            ref.whenDone().thenAccept(done -> phase.done(Math.max(0, done.byteSize())));
        }
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
