package dev.croupier.examples;

import dev.croupier.futures.internal.OutcomeTap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Kills a node process with SIGKILL at a known point of a job that a CLI command runs: when the
 * first attempt of a task named {@code *suffix} has completed, and before the driver handles
 * that outcome, so the job is certainly in its middle. The victim is another node than the one
 * that reported (its stream is the one held up). The outcome is handled only once the driver
 * has declared the victim dead (a bounded wait: its stream breaks at once, or it misses its
 * heartbeats), so the job's report must count the loss.
 */
public final class MidJobKill implements AutoCloseable {

    private final AtomicLong killed = new AtomicLong(-1);

    private MidJobKill(String taskSuffix) {
        OutcomeTap.arm(taskSuffix, event -> {
            int nodes = event.cluster().aliveNodes().size();
            int victim = (event.nodeId() + 1) % nodes;
            long pid = event.pid(victim);
            ProcessHandle handle = ProcessHandle.of(pid).orElseThrow(
                    () -> new IllegalStateException("node " + victim + " has no process (pid " + pid + ")"));
            handle.destroyForcibly(); // SIGKILL, as kill -9
            handle.onExit().orTimeout(30, TimeUnit.SECONDS).join();
            killed.set(pid);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (event.cluster().aliveNodes().contains(victim) && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        });
    }

    /** Arms the kill for the next job this JVM runs. */
    public static MidJobKill whenFirstCompletes(String taskSuffix) {
        return new MidJobKill(taskSuffix);
    }

    /** The pid killed, or -1 if the tap never fired. */
    public long killedPid() {
        return killed.get();
    }

    @Override
    public void close() {
        OutcomeTap.disarm();
    }
}
