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

    /**
     * Counts a task of phase {@code name}, whose clock starts at its first tracked task, and the
     * bytes of {@code outputs}, outputs of that one task: one callback for the task, on its first
     * output, since the runtime settles a task's outputs together (a waiter on one finds the
     * others settled and none freed yet; a ref answers its size after release too). A callback
     * per output was a future per object: with 100 outputs a map, two fifths of the driver's
     * work submitting the 100 TB graph's maps (docs/benchmarks.md).
     */
    synchronized void track(String name, List<? extends ObjectRef<?>> outputs) {
        Phase phase = byName.computeIfAbsent(name, n -> new Phase(n, System.nanoTime()));
        phase.addTask();
        if (outputs.isEmpty()) {
            return;
        }
        outputs.getFirst().whenDone().thenRun(() -> {
            long bytes = 0;
            for (ObjectRef<?> ref : outputs) {
                bytes += Math.max(0, ref.byteSize());
            }
            phase.done(bytes);
        });
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
