package dev.croupier.futures.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * One incarnation of a node: its CPU slots, task queue, worker threads and object store.
 * Killing a node ends the incarnation; restarting the id makes a new one, so a reference to
 * an old incarnation (say, as an object's location) is simply dead.
 *
 * <p>Design: a FIFO queue and a count of free CPU slots under the node's monitor; a task
 * starts when the slots it asks for are free, on one of {@code cpus} platform threads. The
 * first {@code cpus} queued tasks have their spilled arguments prefetched: they are the next to
 * run, so their restores overlap the running tasks. Prefetching for the whole queue would
 * restore more than memory holds and evict what is about to be used (a reduce phase queues
 * every reducer at once). Thread-safe.
 */
final class Node {

    final int id;
    final int cpus;
    private final NodeStore store;
    private final ExecutorService workers;
    private final Consumer<TaskSpec.Attempt> runner;
    private final Consumer<TaskSpec.Attempt> prefetcher;
    private final ArrayDeque<TaskSpec.Attempt> queue = new ArrayDeque<>();
    private final Set<TaskSpec.Attempt> running = new LinkedHashSet<>();
    private int freeCpus;
    private volatile boolean alive = true;
    private final LongAdder tasksRun = new LongAdder();
    private final LongAdder bytesFetched = new LongAdder();

    Node(int id, int cpus, NodeStore store, Consumer<TaskSpec.Attempt> runner, Consumer<TaskSpec.Attempt> prefetcher) {
        this.id = id;
        this.cpus = cpus;
        this.freeCpus = cpus;
        this.store = store;
        this.runner = runner;
        this.prefetcher = prefetcher;
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "croupier-node-" + id + "-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.workers = Executors.newFixedThreadPool(cpus, threads);
    }

    boolean alive() {
        return alive;
    }

    NodeStore store() {
        return store;
    }

    /** Queued plus running tasks per CPU slot: the scheduler's measure of load. */
    synchronized double load() {
        return (queue.size() + running.size()) / (double) cpus;
    }

    /** Queues an attempt; false if the node is dead. */
    boolean enqueue(TaskSpec.Attempt attempt) {
        synchronized (this) {
            if (!alive) {
                return false;
            }
            queue.add(attempt);
        }
        pump();
        return true;
    }

    /** Called by the runner when an attempt ends, to free its slots. */
    void finished(TaskSpec.Attempt attempt) {
        synchronized (this) {
            if (running.remove(attempt)) {
                freeCpus += attempt.spec.cpus;
            }
            tasksRun.increment();
        }
        pump();
    }

    private void pump() {
        List<TaskSpec.Attempt> start = null;
        List<TaskSpec.Attempt> next = null;
        synchronized (this) {
            while (alive && !queue.isEmpty() && queue.peek().spec.cpus <= freeCpus) {
                TaskSpec.Attempt a = queue.poll();
                freeCpus -= a.spec.cpus;
                running.add(a);
                if (start == null) {
                    start = new ArrayList<>(2);
                }
                start.add(a);
            }
            int ahead = 0;
            for (TaskSpec.Attempt a : queue) {
                if (ahead++ == cpus) {
                    break;
                }
                if (!a.prefetched) {
                    a.prefetched = true;
                    if (next == null) {
                        next = new ArrayList<>(cpus);
                    }
                    next.add(a);
                }
            }
        }
        if (next != null) {
            next.forEach(prefetcher);
        }
        if (start != null) {
            for (TaskSpec.Attempt a : start) {
                try {
                    workers.execute(() -> runner.accept(a));
                } catch (RejectedExecutionException killedMeanwhile) {
                    // kill() took the attempt from the running set and resubmits it elsewhere
                    return;
                }
            }
        }
    }

    /**
     * Ends this incarnation as a crash would: no new work, running tasks interrupted, the
     * store's memory and files released. Returns the attempts that were queued or running.
     */
    List<TaskSpec.Attempt> kill() {
        List<TaskSpec.Attempt> lost;
        synchronized (this) {
            if (!alive) {
                return List.of();
            }
            alive = false;
            lost = new ArrayList<>(queue);
            lost.addAll(running);
            queue.clear();
            running.clear();
        }
        workers.shutdownNow();
        store.close();
        return lost;
    }

    /**
     * Waits up to {@code millis} for the tasks a {@link #kill} interrupted to return; a task
     * that ignores interrupts may outlive it. Returns whether every worker has stopped.
     */
    boolean awaitStopped(long millis) {
        try {
            return workers.awaitTermination(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void recordFetched(long bytes) {
        bytesFetched.add(bytes);
    }

    long tasksRun() {
        return tasksRun.sum();
    }

    long bytesFetched() {
        return bytesFetched.sum();
    }

    @Override
    public String toString() {
        return "node " + id;
    }
}
