package dev.croupier.futures.internal;

import dev.croupier.futures.ClusterStats;
import dev.croupier.objectstore.ObjectId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node protocol with nodes that run nothing and move no data: an attempt occupies its CPU
 * slots on its node for a fixed time, then completes with output sizes computed from its
 * argument sizes, and objects are only ids with sizes. The owner above it is the real one, so
 * what this measures is the driver: its heap per task and object, and the attempts it places
 * per second (see {@link SchedulingSimulation}).
 *
 * <p>Sizes: a task with no object arguments makes {@code sourceBytes} (a map reading its input
 * partition); any other task makes as many bytes as its arguments hold. Either is divided among
 * the outputs, the remainder to the first ones, so bytes are conserved exactly through a graph.
 *
 * <p>One clock thread keeps the attempts' finishing times. It hands the outcomes due to report
 * lanes, one per core, a node always to the same lane, which report each lane's in order: the
 * owner's work on an outcome (waking dependents, which dispatches more) runs there, as it runs
 * on the transport's event loops for node processes (each node's stream on one of them) and on
 * the nodes' own threads in an embedded cluster. One thread for all outcomes handled a push*
 * round's 100 merges one after another, and the next round's maps waited for the last of them
 * (docs/benchmarks.md, "Outcomes on a lane per core"). A node's queued attempt starts when the
 * one before it was due to end, however late its outcome is reported, as a node process starts
 * its queue without the owner. Thread-safe: the nodes' queues and the clock are guarded by this
 * backend's monitor; outcomes are reported outside it.
 */
final class SimulatedBackend implements Backend {

    /** One node incarnation: its slots, its queue, and the objects it holds. */
    private static final class SimNode {
        final NodeLink link;
        final ArrayDeque<Waiting> queued = new ArrayDeque<>();
        final HeldIds held = new HeldIds();
        final AtomicLong tasksRun = new AtomicLong();
        int busySlots;
        boolean dead;

        SimNode(NodeLink link) {
            this.link = link;
        }
    }

    /**
     * The ids a simulated node holds, a bit per sequence number in pages of 4,096 (one owner's
     * ids differ only in their sequence number, and a node holds a window of recent ones: a
     * page's bits are dropped once it is empty, its slot in the directory stays), so
     * that this bookkeeping, which runs on the driver's threads here, costs the driver about
     * what queueing a command to a real node does. Thread-safe: guarded by its monitor.
     */
    private static final class HeldIds {
        private static final int PAGE_BITS = 12;
        /** By page number: 64 words of bits, then the page's count; null for an empty page. */
        private long[][] pages = new long[16][];
        private int count;

        synchronized void add(ObjectId id) {
            long seq = id.low();
            int index = Math.toIntExact(seq >>> PAGE_BITS);
            if (index >= pages.length) {
                pages = Arrays.copyOf(pages, Math.max(index + 1, 2 * pages.length));
            }
            long[] page = pages[index];
            if (page == null) {
                page = pages[index] = new long[65];
            }
            int bit = (int) seq & ((1 << PAGE_BITS) - 1);
            if ((page[bit >>> 6] & (1L << bit)) == 0) {
                page[bit >>> 6] |= 1L << bit;
                page[64]++;
                count++;
            }
        }

        synchronized void remove(ObjectId id) {
            long index = id.low() >>> PAGE_BITS;
            long[] page = index < pages.length ? pages[(int) index] : null;
            int bit = (int) id.low() & ((1 << PAGE_BITS) - 1);
            if (page != null && (page[bit >>> 6] & (1L << bit)) != 0) {
                page[bit >>> 6] &= ~(1L << bit);
                count--;
                if (--page[64] == 0) {
                    pages[(int) index] = null;
                }
            }
        }

        synchronized int size() {
            return count;
        }

        synchronized void clear() {
            Arrays.fill(pages, null);
            count = 0;
        }
    }

    /** An attempt queued on its node since {@code since} (nanoTime). */
    private record Waiting(AttemptCall call, long since) {}

    /** An attempt running on a node, due to finish at {@code at} (nanoTime). */
    private record Finish(long at, long seq, SimNode node, AttemptCall call, long queuedNanos) {}

    private final int nodeCount;
    private final int cpusPerNode;
    private final long taskNanos;
    private final long sourceBytes;
    private final long objectStoreBytes;
    private final AtomicInteger incarnations = new AtomicInteger();
    private final ConcurrentHashMap<NodeLink, SimNode> byLink = new ConcurrentHashMap<>();
    // guarded by this
    private final PriorityQueue<Finish> clock = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long seq;
    private boolean closed;
    private Thread clockThread;
    /** One thread each, reporting in the order handed: a node's outcomes always go to the same one. */
    private final ExecutorService[] lanes;
    private volatile Events events;

    /**
     * @param taskNanos how long every attempt holds its slots
     * @param sourceBytes what a task without object arguments makes
     * @param objectStoreBytes the store capacity the nodes report (only a figure here)
     */
    SimulatedBackend(int nodes, int cpusPerNode, long taskNanos, long sourceBytes, long objectStoreBytes) {
        this.nodeCount = nodes;
        this.cpusPerNode = cpusPerNode;
        this.taskNanos = taskNanos;
        this.sourceBytes = sourceBytes;
        this.objectStoreBytes = objectStoreBytes;
        this.lanes = new ExecutorService[Math.max(1, Math.min(nodes, Runtime.getRuntime().availableProcessors()))];
    }

    @Override
    public List<NodeLink> start(Events events) {
        this.events = events;
        List<NodeLink> links = new ArrayList<>(nodeCount);
        for (int i = 0; i < nodeCount; i++) {
            links.add(startNode(i));
        }
        synchronized (this) {
            for (int i = 0; i < lanes.length; i++) {
                lanes[i] = Executors.newSingleThreadExecutor(
                        Thread.ofPlatform().daemon().name("croupier-simulated-lane-" + i).factory());
            }
            clockThread = Thread.ofPlatform().daemon().name("croupier-simulated-clock").start(this::runClock);
        }
        return links;
    }

    @Override
    public boolean encodes() {
        return false;
    }

    @Override
    public NodeLink startNode(int id) {
        NodeLink link = new NodeLink(id, cpusPerNode, "simulated-" + id + "." + incarnations.incrementAndGet());
        byLink.put(link, new SimNode(link));
        return link;
    }

    @Override
    public void kill(NodeLink link) {
        SimNode node = byLink.remove(link);
        if (node != null) {
            synchronized (this) {
                node.dead = true;
                node.queued.clear();
            }
            node.held.clear();
        }
    }

    @Override
    public void dispatch(NodeLink link, AttemptCall call) {
        SimNode node = byLink.get(link);
        if (node == null) {
            return; // the node died meanwhile: its death resubmits what the link held
        }
        synchronized (this) {
            if (node.dead || closed) {
                return;
            }
            if (node.busySlots + call.cpus() <= cpusPerNode && node.queued.isEmpty()) {
                begin(node, call, System.nanoTime(), 0);
            } else {
                node.queued.add(new Waiting(call, System.nanoTime()));
            }
        }
    }

    /** Starts an attempt on its slots at {@code start} (nanoTime). Caller holds the monitor. */
    private void begin(SimNode node, AttemptCall call, long start, long queuedNanos) {
        node.busySlots += call.cpus();
        clock.add(new Finish(start + taskNanos, seq++, node, call, queuedNanos));
        notifyAll();
    }

    /**
     * Frees an attempt's slots at {@code at} (nanoTime) and starts what the node queued, from
     * then: a node starts its next attempt when one ends, whenever the clock thread, which also
     * runs the owner's work on outcomes, gets to it. Caller holds the monitor.
     */
    private void release(SimNode node, int cpus, long at) {
        node.busySlots -= cpus;
        while (!node.dead && !node.queued.isEmpty() && node.busySlots + node.queued.peek().call.cpus() <= cpusPerNode) {
            Waiting next = node.queued.poll();
            long start = Math.max(at, next.since);
            begin(node, next.call, start, start - next.since);
        }
    }

    @Override
    public void cancel(NodeLink link, long attemptId) {
        SimNode node = byLink.get(link);
        if (node == null) {
            return;
        }
        synchronized (this) {
            if (!node.queued.removeIf(w -> w.call.attemptId() == attemptId)) {
                // running: it ends now, unreported, and its slots take the node's next attempt
                for (Finish f : clock) {
                    if (f.node == node && f.call.attemptId() == attemptId) {
                        clock.remove(f);
                        release(node, f.call.cpus(), System.nanoTime());
                        break;
                    }
                }
            }
        }
    }

    @Override
    public void free(NodeLink link, ObjectId id) {
        SimNode node = byLink.get(link);
        if (node != null) {
            node.held.remove(id);
        }
    }

    @Override
    public NodeStore.Reading read(NodeLink node, ObjectId id) {
        throw new UnsupportedOperationException("object " + id + ": a simulated node holds sizes, not values");
    }

    @Override
    public long put(NodeLink link, ObjectId id, ValueCodecs.Encoded value) {
        SimNode node = byLink.get(link);
        if (node == null) {
            throw new IllegalStateException(link + " is dead");
        }
        node.held.add(id);
        return value.size();
    }

    @Override
    public ClusterStats.NodeStats stats(NodeLink link) {
        SimNode node = byLink.get(link);
        return new ClusterStats.NodeStats(link.id, link.alive(), node == null ? 0 : node.tasksRun.get(),
                node == null ? 0 : node.held.size(), 0, 0, 0, 0, link.waiting());
    }

    @Override
    public long objectStoreBytes() {
        return objectStoreBytes;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = clockThread;
            notifyAll();
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        // after the clock, which hands them work until it stops
        for (ExecutorService lane : lanes) {
            if (lane != null) {
                lane.shutdownNow();
            }
        }
    }

    /**
     * The clock: at each attempt's due time, frees its slots and starts what its node had
     * queued; hands every outcome then due to its node's lane, all of them at once.
     */
    private void runClock() {
        List<List<Finish>> byLane = new ArrayList<>(lanes.length);
        for (int i = 0; i < lanes.length; i++) {
            byLane.add(new ArrayList<>());
        }
        while (true) {
            synchronized (this) {
                while (true) {
                    if (closed) {
                        return;
                    }
                    Finish f = clock.peek();
                    long wait = f == null ? Long.MAX_VALUE : f.at - System.nanoTime();
                    if (wait <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, Math.min(wait, TimeUnit.SECONDS.toNanos(1)));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                long now = System.nanoTime();
                for (Finish f = clock.peek(); f != null && f.at <= now; f = clock.peek()) {
                    clock.poll();
                    release(f.node, f.call.cpus(), f.at);
                    if (!f.node.dead) {
                        byLane.get(f.node.link.id % lanes.length).add(f);
                    }
                }
            }
            for (int i = 0; i < lanes.length; i++) {
                if (!byLane.get(i).isEmpty()) {
                    List<Finish> batch = List.copyOf(byLane.get(i));
                    byLane.get(i).clear();
                    lanes[i].execute(() -> batch.forEach(this::report));
                }
            }
        }
    }

    private void report(Finish f) {
        AttemptCall call = f.call;
        long in = 0;
        boolean readsObjects = false;
        for (Object arg : call.args()) {
            if (arg instanceof AttemptCall.Ref ref) {
                in += ref.size();
                readsObjects = true;
            } else if (arg instanceof AttemptCall.RefList list) {
                for (AttemptCall.Ref ref : list.refs()) {
                    in += ref.size();
                }
                readsObjects = true;
            }
        }
        long made = readsObjects ? in : sourceBytes;
        int n = call.outputs().length;
        long[] sizes = new long[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = made / n + (i < made % n ? 1 : 0);
            f.node.held.add(call.outputs()[i]);
        }
        f.node.tasksRun.incrementAndGet();
        events.outcome(f.node.link, new AttemptOutcome(call.attemptId(), AttemptOutcome.Kind.COMPLETED, sizes, null,
                null, AttemptOutcome.NO_COPIES, f.queuedNanos, taskNanos, 0, in, made, AttemptOutcome.NO_VALUES));
    }
}
