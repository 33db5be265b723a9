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

    /** A task's outputs, and whether the driver has dropped them and left their release to the count. */
    private record Tracked(Phase phase, List<? extends ObjectRef<?>> outputs, boolean releaseOnCount) {}

    /**
     * Counts a task of phase {@code name}, whose clock starts at its first tracked task, and the
     * bytes of {@code outputs}, outputs of that one task: one callback for the task, on its first
     * output, since the runtime settles a task's outputs together (a waiter on one finds the
     * others settled). A callback per output was a future per object: with 100 outputs a map,
     * two fifths of the driver's work submitting the 100 TB graph's maps (docs/benchmarks.md).
     * The driver gives up its claim on the outputs through {@link #release} only, so that the
     * sizes are still there when they are counted.
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
        uncounted.put(first, new Tracked(phase, outputs, false));
        first.whenDone().thenRun(() -> count(first));
    }

    /**
     * Drops the driver's claims on {@code outputs}, the outputs of one task, once the task's
     * phase has counted their bytes: now if every one is done, else from the count's callback.
     * Outputs of no tracked task are released at once.
     *
     * <p>Why not release at once in every case: a consumer holding the only other claim frees
     * an output as soon as it has read it, and {@code byteSize} says -1 from then on. Each output
     * is marked done on its own, so a driver that sees the first done may find the others not
     * yet; and the thread that settled them may reach the callback only after a consumer,
     * submitted once they were done, has run and freed them.
     */
    void release(List<? extends ObjectRef<?>> outputs) {
        if (outputs.isEmpty()) {
            return;
        }
        ObjectRef<?> first = outputs.getFirst();
        if (allDone(outputs)) {
            count(first);
        } else if (uncounted.computeIfPresent(first, (k, t) -> new Tracked(t.phase, t.outputs, true)) != null) {
            return;
        }
        outputs.forEach(ObjectRef::release);
    }

    private static boolean allDone(List<? extends ObjectRef<?>> outputs) {
        for (ObjectRef<?> ref : outputs) {
            if (!ref.isDone()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Counts the task whose first output is {@code first}, once, if every output is done, and
     * releases its outputs if the driver has dropped them. An output not done yet is waited
     * for: the runtime marks a task's outputs done one after another, so a look at them that
     * finds the first done (a callback that ran at once because the task had ended before it
     * was tracked, say) may find a later one not yet.
     */
    private void count(ObjectRef<?> first) {
        while (true) {
            Tracked task = uncounted.get(first);
            if (task == null) {
                return;
            }
            long bytes = 0;
            for (ObjectRef<?> ref : task.outputs) {
                long size = ref.byteSize();
                if (size < 0) {
                    ref.whenDone().thenRun(() -> count(first));
                    return;
                }
                bytes += size;
            }
            if (uncounted.remove(first, task)) {
                task.phase.done(bytes);
                if (task.releaseOnCount) {
                    task.outputs.forEach(ObjectRef::release);
                }
                return;
            }
            // counted by another thread, or dropped by the driver meanwhile: look again
        }
    }

    /**
     * The phases so far, in the order they began, with every task whose outputs are all done
     * counted: a caller who has seen the job's outputs done may get here before the thread
     * that settled the last of them has run their callbacks.
     */
    List<PhaseStats> stats() {
        for (Map.Entry<ObjectRef<?>, Tracked> e : uncounted.entrySet()) {
            if (allDone(e.getValue().outputs)) {
                count(e.getKey());
            }
        }
        return snapshot();
    }

    private synchronized List<PhaseStats> snapshot() {
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
