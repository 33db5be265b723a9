package dev.croupier.futures.internal;

import dev.croupier.futures.Cluster;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A test seam: an action run once, in the driver, when the first completed attempt of a task
 * whose name ends with a given suffix reports back, before the owner handles that outcome.
 * Tests use it to fail a node at a known point of a job run by code they do not control (a CLI
 * command): once the first map output exists, and before any reducer can have finished. The
 * outcome waits for the action, so the job cannot run past the point while the action works.
 * Nothing is armed unless a test arms it. Thread-safe; one tap at a time.
 */
public final class OutcomeTap {

    /** Where the tap fired: the cluster, and the node whose outcome it is. */
    public interface Event {
        Cluster cluster();

        /** The node that reported the outcome. */
        int nodeId();

        /** The process id of node {@code nodeId}, for nodes the driver started; -1 otherwise. */
        long pid(int nodeId);
    }

    private record Armed(String suffix, Consumer<Event> action) {}

    private static final AtomicReference<Armed> ARMED = new AtomicReference<>();

    private OutcomeTap() {}

    /** Arms the tap; it fires once, then disarms itself. */
    public static void arm(String taskNameSuffix, Consumer<Event> action) {
        ARMED.set(new Armed(taskNameSuffix, action));
    }

    /** Disarms the tap if it has not fired. */
    public static void disarm() {
        ARMED.set(null);
    }

    /** Whether a completed outcome of {@code taskName} fires the tap: a volatile read when unarmed. */
    static boolean armedFor(String taskName) {
        Armed armed = ARMED.get();
        return armed != null && taskName.endsWith(armed.suffix());
    }

    /** Runs the action, if no other outcome fired it first. */
    static void fire(String taskName, Event event) {
        Armed armed = ARMED.get();
        if (armed != null && taskName.endsWith(armed.suffix()) && ARMED.compareAndSet(armed, null)) {
            armed.action().accept(event);
        }
    }
}
