package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.Fn0;
import dev.croupier.futures.Fn1;
import dev.croupier.futures.Fn2;
import dev.croupier.futures.Fn3;
import dev.croupier.futures.Fn4;
import dev.croupier.futures.Fn5;
import dev.croupier.futures.Fn6;
import dev.croupier.futures.GetTimeoutException;
import dev.croupier.futures.ObjectLostException;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.RefList;
import dev.croupier.futures.TaskBuilder;
import dev.croupier.futures.TaskCancelledException;
import dev.croupier.futures.TaskFailedException;
import dev.croupier.futures.WaitResult;
import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.StoreClosedException;
import dev.croupier.objectstore.StoreMetrics;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * N logical nodes in one JVM: the engine behind {@link Cluster#builder()}.
 *
 * <p>Design. The cluster is the owner of every object (Ray's ownership model with a single
 * owner): it keeps an {@link ObjectEntry} per live object and a {@link TaskSpec} per task,
 * which together are the lineage. A submitted task waits for its dependencies through
 * callbacks on their entries, is placed (hard affinity, soft affinity, data locality, least
 * load) and dispatched to a {@link Node} through the {@link Transport}. The node's worker
 * resolves arguments (fetching remote copies into its own store, or sending the task back to
 * wait if an argument has been lost), runs the function, encodes the results into its store,
 * and marks the outputs ready, which wakes the dependents. Node death loses the node's objects
 * and its attempts: attempts are resubmitted; objects are rebuilt lazily, when something needs
 * them, by re-running their creators recursively. Callbacks run on the thread that settled an
 * entry, through a per-thread trampoline so long chains never deepen the stack.
 *
 * <p>Placement lives in {@link Placement}, the worker side of an attempt in
 * {@link AttemptRunner}, {@code wait} in {@link WaitSet}. What stays here is the owner's state
 * machine (submit, complete, fail, retry, cancel, rebuild, free), longer than most classes
 * because it reads best in one place. Thread-safe.
 */
public final class EmbeddedCluster implements Cluster {


    private final ClusterConfig config;
    private final ValueCodecs codecs;
    private final Transport transport = new LocalTransport();
    private final long clusterTag = ThreadLocalRandom.current().nextLong();
    private final AtomicLong nextObject = new AtomicLong();
    private final AtomicLong nextTask = new AtomicLong();
    private final AtomicLong completionSeq = new AtomicLong();
    private final AtomicInteger incarnations = new AtomicInteger();
    private final ConcurrentHashMap<ObjectId, ObjectEntry> table = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Node> nodes = new CopyOnWriteArrayList<>();
    private final TaskStatsRecorder stats = new TaskStatsRecorder();
    private final Path spillRoot;
    private final Placement placement;
    private final AttemptRunner runner;
    private volatile boolean closed;

    public EmbeddedCluster(ClusterConfig config) {
        this.config = config;
        this.codecs = new ValueCodecs(config.codecs(), config.serializableAllowList());
        this.placement = new Placement(nodes, config.smallObjectBytes());
        this.runner = new AttemptRunner(codecs, transport, stats, new AttemptRunner.Outcomes() {
            @Override
            public void complete(TaskSpec.Attempt attempt, long[] sizes) {
                EmbeddedCluster.this.complete(attempt, sizes);
            }

            @Override
            public void requeue(TaskSpec.Attempt attempt, ObjectEntry lost) {
                EmbeddedCluster.this.requeue(attempt, lost);
            }

            @Override
            public void failed(TaskSpec.Attempt attempt, Throwable error) {
                attemptFailed(attempt, error);
            }
        });
        try {
            Path base = config.spillDirectory() != null
                    ? config.spillDirectory() : Path.of(System.getProperty("java.io.tmpdir"));
            Files.createDirectories(base);
            this.spillRoot = Files.createTempDirectory(base, "croupier-cluster-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a spill folder under " + config.spillDirectory(), e);
        }
        for (int i = 0; i < config.nodes(); i++) {
            nodes.add(newNode(i));
        }
    }

    private Node newNode(int id) {
        String name = "node-" + id + "." + incarnations.incrementAndGet();
        Path spill = spillRoot.resolve(name);
        // Store names must be unique on the machine (their memory folders share /dev/shm), also
        // across clusters and JVMs: the cluster's random tag makes them so.
        String storeName = Long.toUnsignedString(clusterTag, 36) + "-" + name;
        try {
            Files.createDirectories(spill);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the spill folder " + spill, e);
        }
        ObjectStore.Builder store = ObjectStore.builder()
                .name(storeName)
                .capacityBytes(config.objectStoreBytes())
                .spillDirectory(spill);
        if (config.memoryDirectory() != null) {
            store.memoryDirectory(config.memoryDirectory());
        }
        return new Node(id, config.cpusPerNode(), new NodeStore(store.build(), config.smallObjectBytes()), runner::run,
                attempt -> prefetchArguments(attempt.spec, attempt.node));
    }

    Executor callbacks() {
        return ForkJoinPool.commonPool();
    }

    // ---------------------------------------------------------------- submission

    @Override
    public <R> TaskBuilder<R> task(Fn0<R> fn) {
        return builder(fn, a -> fn.apply());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, R> TaskBuilder<R> task(Fn1<A, R> fn, Object a1) {
        return builder(fn, a -> fn.apply((A) a[0]), a1);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, B, R> TaskBuilder<R> task(Fn2<A, B, R> fn, Object a1, Object a2) {
        return builder(fn, a -> fn.apply((A) a[0], (B) a[1]), a1, a2);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, B, C, R> TaskBuilder<R> task(Fn3<A, B, C, R> fn, Object a1, Object a2, Object a3) {
        return builder(fn, a -> fn.apply((A) a[0], (B) a[1], (C) a[2]), a1, a2, a3);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, B, C, D, R> TaskBuilder<R> task(Fn4<A, B, C, D, R> fn, Object a1, Object a2, Object a3, Object a4) {
        return builder(fn, a -> fn.apply((A) a[0], (B) a[1], (C) a[2], (D) a[3]), a1, a2, a3, a4);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, B, C, D, E, R> TaskBuilder<R> task(
            Fn5<A, B, C, D, E, R> fn, Object a1, Object a2, Object a3, Object a4, Object a5) {
        return builder(fn, a -> fn.apply((A) a[0], (B) a[1], (C) a[2], (D) a[3], (E) a[4]), a1, a2, a3, a4, a5);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A, B, C, D, E, F, R> TaskBuilder<R> task(
            Fn6<A, B, C, D, E, F, R> fn, Object a1, Object a2, Object a3, Object a4, Object a5, Object a6) {
        return builder(fn, a -> fn.apply((A) a[0], (B) a[1], (C) a[2], (D) a[3], (E) a[4], (F) a[5]),
                a1, a2, a3, a4, a5, a6);
    }

    private <R> TaskBuilder<R> builder(Serializable fn, TaskSpec.Invocation invocation, Object... args) {
        ensureOpen();
        return new LocalTaskBuilder<>(this, TaskNames.of(fn), invocation, args);
    }

    <T> List<ObjectRef<T>> submit(LocalTaskBuilder<?> b, int numReturns, boolean multi) {
        ensureOpen();
        if (b.cpus > config.cpusPerNode()) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + b.name + "' asks for " + b.cpus
                    + " cpus but a node has " + config.cpusPerNode());
        }
        ObjectEntry[] deps = dependencies(b.args, b.name);
        TaskSpec spec = new TaskSpec(nextTask.incrementAndGet(), b.name, b.invocation, b.args, deps, multi,
                b.affinityNode, b.affinity, b.maxRetries, b.retryExceptions, b.cpus);
        ObjectEntry[] outputs = new ObjectEntry[numReturns];
        List<ObjectRef<T>> refs = new ArrayList<>(numReturns);
        for (int i = 0; i < numReturns; i++) {
            outputs[i] = new ObjectEntry(newObjectId(), spec, i);
            table.put(outputs[i].id, outputs[i]);
            refs.add(new LocalObjectRef<>(this, outputs[i]));
        }
        spec.outputs = outputs;
        for (ObjectEntry dep : deps) {
            dep.addTaskUse();
        }
        submitSpec(spec);
        return refs;
    }

    private ObjectEntry[] dependencies(Object[] args, String taskName) {
        IdentityHashMap<ObjectEntry, Boolean> deps = new IdentityHashMap<>();
        for (Object arg : args) {
            if (arg instanceof ObjectRef<?> ref) {
                deps.put(entryOf(ref, taskName), Boolean.TRUE);
            } else if (arg instanceof RefList<?> list) {
                for (ObjectRef<?> ref : list.refs()) {
                    deps.put(entryOf(ref, taskName), Boolean.TRUE);
                }
            }
        }
        return deps.keySet().toArray(new ObjectEntry[0]);
    }

    private ObjectEntry entryOf(ObjectRef<?> ref, String taskName) {
        if (!(ref instanceof LocalObjectRef<?> local) || !table.containsKey(local.entry.id) && local.entry.unneeded()) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + taskName + "': argument " + ref
                    + " does not belong to this cluster or was released");
        }
        return local.entry;
    }

    private ObjectId newObjectId() {
        return new ObjectId(clusterTag, nextObject.incrementAndGet());
    }

    /** Waits for the spec's dependencies, then places it. The caller holds its task uses. */
    private void submitSpec(TaskSpec spec) {
        int gen;
        synchronized (spec) {
            gen = ++spec.generation;
            spec.pendingDeps = spec.deps.length + 1;
            spec.state = TaskSpec.State.WAITING;
        }
        for (ObjectEntry dep : spec.deps) {
            if (dep.whenSettled(() -> depSettled(spec, gen, dep))) {
                rebuild(dep);
            }
        }
        depSettled(spec, gen, null);
    }

    private void depSettled(TaskSpec spec, int gen, ObjectEntry dep) {
        if (dep != null && dep.state() == ObjectEntry.State.FAILED) {
            boolean fail;
            synchronized (spec) {
                fail = spec.generation == gen && spec.state == TaskSpec.State.WAITING;
                if (fail) {
                    spec.state = TaskSpec.State.FAILED;
                }
            }
            if (fail) {
                releaseDeps(spec);
                failOutputs(spec, dep.error());
            }
            return;
        }
        boolean ready;
        synchronized (spec) {
            if (spec.generation != gen || spec.state != TaskSpec.State.WAITING) {
                return;
            }
            ready = --spec.pendingDeps == 0;
        }
        if (ready) {
            schedule(spec, gen);
        }
    }

    private void schedule(TaskSpec spec, int gen) {
        while (true) {
            Node node = placement.place(spec);
            if (node == null) {
                String why = spec.affinity == Affinity.HARD && spec.affinityNode >= 0
                        ? "node " + spec.affinityNode + " (hard affinity) is not alive"
                        : "no node is alive";
                failSpec(spec, gen, TaskSpec.State.WAITING,
                        new TaskFailedException(spec.name, spec.affinityNode, spec + " cannot run: " + why, null));
                return;
            }
            TaskSpec.Attempt attempt = new TaskSpec.Attempt(spec, node, System.nanoTime());
            synchronized (spec) {
                if (spec.generation != gen || spec.state != TaskSpec.State.WAITING) {
                    return;
                }
                spec.state = TaskSpec.State.QUEUED;
                spec.current = attempt;
            }
            if (transport.dispatch(attempt)) {
                return;
            }
            synchronized (spec) {
                if (spec.current != attempt || spec.state != TaskSpec.State.QUEUED) {
                    return;
                }
                spec.state = TaskSpec.State.WAITING;
                spec.current = null;
            }
        }
    }

    /**
     * Asks the node's store to restore the task's spilled arguments while the task waits near
     * the head of its node's queue, so disk reads overlap other tasks' execution. Small values
     * never spill.
     */
    private void prefetchArguments(TaskSpec spec, Node node) {
        if (spec.deps.length == 0) {
            return;
        }
        List<ObjectId> local = new ArrayList<>(spec.deps.length);
        for (ObjectEntry dep : spec.deps) {
            if (dep.size() >= config.smallObjectBytes() && dep.isLocatedOn(node)) {
                local.add(dep.id);
            }
        }
        try {
            node.store().prefetch(local);
        } catch (IllegalStateException | StoreClosedException diedMeanwhile) {
            // the kill resubmits the attempt; nothing to restore
        }
    }

    private void complete(TaskSpec.Attempt attempt, long[] sizes) {
        TaskSpec spec = attempt.spec;
        Node node = attempt.node;
        boolean won;
        synchronized (spec) {
            won = spec.current == attempt && spec.state == TaskSpec.State.RUNNING;
            if (won) {
                spec.state = TaskSpec.State.DONE;
                spec.current = null;
            }
        }
        if (!won) {
            discardOutputs(node, spec.outputs);
            return;
        }
        // Release the arguments before waking anyone: a caller who has every value must find
        // nothing still held for this task.
        releaseDeps(spec);
        for (int i = 0; i < spec.outputs.length; i++) {
            ObjectEntry out = spec.outputs[i];
            List<Runnable> waiters = out.markReady(node, sizes[i], completionSeq.incrementAndGet());
            if (waiters == ObjectEntry.REJECTED) {
                discardOutputs(node, new ObjectEntry[] {out});
            } else {
                Trampoline.runAll(waiters);
                if (out.unneeded()) {
                    freeEntry(out);
                }
            }
        }
    }

    /** Deletes the copies a superseded attempt wrote, except those the owner lists as this node's. */
    private static void discardOutputs(Node node, ObjectEntry[] outputs) {
        for (ObjectEntry out : outputs) {
            if (!out.isLocatedOn(node)) {
                deleteQuietly(node, out);
            }
        }
    }

    private void requeue(TaskSpec.Attempt attempt, ObjectEntry lost) {
        TaskSpec spec = attempt.spec;
        int gen;
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.RUNNING) {
                return;
            }
            spec.state = TaskSpec.State.WAITING;
            spec.current = null;
            gen = ++spec.generation;
            spec.pendingDeps = 1;
        }
        if (lost.whenSettled(() -> depSettled(spec, gen, lost))) {
            rebuild(lost);
        }
    }

    private void attemptFailed(TaskSpec.Attempt attempt, Throwable t) {
        TaskSpec spec = attempt.spec;
        Node node = attempt.node;
        if (!node.alive()) {
            return; // the kill resubmits what was running there
        }
        boolean retry;
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.RUNNING) {
                return; // cancelled, or superseded
            }
            retry = spec.retryExceptions && spec.retries < spec.maxRetries;
            spec.current = null;
            if (retry) {
                spec.retries++;
            } else {
                spec.state = TaskSpec.State.FAILED;
            }
        }
        discardOutputs(node, spec.outputs);
        if (retry) {
            submitSpec(spec);
            return;
        }
        Throwable cause = t instanceof java.lang.reflect.InvocationTargetException ite ? ite.getCause() : t;
        releaseDeps(spec);
        failOutputs(spec, new TaskFailedException(spec.name, node.id,
                spec + " failed on node " + node.id + ": " + cause, cause));
    }

    private void failSpec(TaskSpec spec, int gen, TaskSpec.State expected, CroupierException error) {
        synchronized (spec) {
            if (spec.generation != gen || spec.state != expected) {
                return;
            }
            spec.state = TaskSpec.State.FAILED;
            spec.current = null;
        }
        releaseDeps(spec);
        failOutputs(spec, error);
    }

    private void failOutputs(TaskSpec spec, CroupierException error) {
        for (ObjectEntry out : spec.outputs) {
            Trampoline.runAll(out.markFailed(error, completionSeq.incrementAndGet()));
            if (out.unneeded()) {
                freeEntry(out);
            }
        }
    }

    private void releaseDeps(TaskSpec spec) {
        for (ObjectEntry dep : spec.deps) {
            if (dep.dropTaskUse()) {
                freeEntry(dep);
            }
        }
    }

    // ---------------------------------------------------------------- lineage

    /**
     * Rebuilds a lost or freed entry by re-running its creator (which may rebuild its own
     * arguments). A rebuild is not a retry and does not spend the creator's {@code maxRetries}:
     * one node death can need the same creator several times (each lost downstream object
     * whose inputs were already freed rebuilds its chain again: a shuffle's map, once per lost
     * reduce output), and every rebuild answers a loss, so the number of rebuilds is bounded by
     * the losses, not by the task.
     */
    void rebuild(ObjectEntry entry) {
        if (!entry.markRebuilding()) {
            return;
        }
        table.put(entry.id, entry);
        TaskSpec creator = entry.creator;
        if (creator == null) {
            Trampoline.runAll(entry.markFailed(new ObjectLostException(entry + " was on no live node; objects made by"
                    + " put cannot be rebuilt"), completionSeq.incrementAndGet()));
            return;
        }
        boolean resubmit;
        synchronized (creator) {
            resubmit = creator.state == TaskSpec.State.DONE;
            if (resubmit) {
                creator.state = TaskSpec.State.WAITING;
            }
        }
        if (resubmit) {
            for (ObjectEntry dep : creator.deps) {
                dep.addTaskUse();
            }
            submitSpec(creator);
        }
    }

    // ---------------------------------------------------------------- objects

    @Override
    public <T> ObjectRef<T> put(T value) {
        ensureOpen();
        ValueCodecs.Encoded encoded = codecs.encode(value);
        while (true) {
            Node node = placement.leastLoaded();
            if (node == null) {
                throw new CroupierException(ErrorCode.CLOSED, "no node is alive to put a value on");
            }
            ObjectEntry entry = new ObjectEntry(newObjectId(), null, 0);
            try {
                long size = node.store().put(entry.id, encoded);
                table.put(entry.id, entry);
                LocalObjectRef<T> ref = new LocalObjectRef<>(this, entry);
                entry.markReady(node, size, completionSeq.incrementAndGet());
                return ref;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CroupierException(ErrorCode.CANCELLED, "interrupted while putting a value", e);
            } catch (IllegalStateException | StoreClosedException e) {
                if (node.alive()) {
                    throw e;
                }
            }
        }
    }

    Object getValue(ObjectEntry entry, Duration timeout, LocalObjectRef.Release release) {
        long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
        try {
            Object kept = release.pinnedView();
            if (kept != null) {
                return kept;
            }
            while (true) {
                ensureOpen();
                if (!entry.awaitSettled(deadline)) {
                    throw new GetTimeoutException(entry + " was not ready within " + timeout);
                }
                if (entry.state() == ObjectEntry.State.FAILED) {
                    throw entry.error();
                }
                Node node = entry.liveLocation(null);
                if (node == null) {
                    rebuild(entry);
                    continue;
                }
                NodeStore.Reading reading;
                try {
                    reading = node.store().open(entry.id);
                } catch (IllegalStateException | StoreClosedException closed) {
                    continue; // the node died under us; its location is dead now
                }
                if (reading == null) {
                    entry.removeLocation(node);
                    continue;
                }
                if (ValueCodecs.isView(reading.frame())) {
                    return release.keepPinned(reading, codecs.decode(reading.frame()));
                }
                try (reading) {
                    return codecs.decode(reading.frame());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CroupierException(ErrorCode.CANCELLED, "interrupted while waiting for " + entry, e);
        }
    }

    void dropHandle(ObjectEntry entry) {
        if (entry.dropHandle()) {
            freeEntry(entry);
        }
    }

    private void freeEntry(ObjectEntry entry) {
        List<Node> copies = entry.free();
        if (copies == null) {
            return;
        }
        table.remove(entry.id, entry);
        for (Node n : copies) {
            deleteQuietly(n, entry);
        }
    }

    private static void deleteQuietly(Node node, ObjectEntry... entries) {
        if (!node.alive()) {
            return;
        }
        for (ObjectEntry e : entries) {
            try {
                node.store().delete(e.id);
            } catch (IllegalStateException | StoreClosedException closedUnderUs) {
                return;
            }
        }
    }

    @Override
    public <T> WaitResult<T> wait(List<? extends ObjectRef<T>> refs, int numReady, Duration timeout) {
        if (numReady < 0 || numReady > refs.size()) {
            throw new CroupierException(ErrorCode.BAD_INPUT,
                    "wait: numReady = " + numReady + " is out of range; allowed: 0.." + refs.size());
        }
        List<LocalObjectRef<T>> locals = new ArrayList<>(refs.size());
        for (ObjectRef<T> ref : refs) {
            entryOf(ref, "wait");
            locals.add((LocalObjectRef<T>) ref);
        }
        return WaitSet.await(locals, numReady, timeout);
    }

    @Override
    public boolean cancel(ObjectRef<?> ref) {
        TaskSpec spec = entryOf(ref, "cancel").creator;
        if (spec == null) {
            return false;
        }
        synchronized (spec) {
            if (spec.isFinished()) {
                return false;
            }
            spec.state = TaskSpec.State.CANCELLED;
            if (spec.current != null && spec.current.runner != null) {
                spec.current.runner.interrupt();
            }
            spec.current = null;
        }
        releaseDeps(spec);
        failOutputs(spec, new TaskCancelledException(spec + " was cancelled"));
        return true;
    }

    // ---------------------------------------------------------------- nodes

    @Override
    public void killNode(int nodeId) {
        Node node = node(nodeId);
        for (TaskSpec.Attempt attempt : node.kill()) {
            TaskSpec spec = attempt.spec;
            boolean resubmit;
            synchronized (spec) {
                if (spec.current != attempt
                        || (spec.state != TaskSpec.State.QUEUED && spec.state != TaskSpec.State.RUNNING)) {
                    continue;
                }
                resubmit = spec.retries < spec.maxRetries;
                spec.current = null;
                if (resubmit) {
                    spec.retries++;
                } else {
                    spec.state = TaskSpec.State.FAILED;
                }
            }
            if (resubmit) {
                submitSpec(spec);
            } else {
                releaseDeps(spec);
                failOutputs(spec, new TaskFailedException(spec.name, nodeId, "node " + nodeId + " died while running "
                        + spec + ", which has used its " + spec.maxRetries + " retries", null));
            }
        }
    }

    @Override
    public void restartNode(int nodeId) {
        ensureOpen();
        synchronized (nodes) {
            if (node(nodeId).alive()) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "restartNode: node " + nodeId + " is alive");
            }
            nodes.set(nodeId, newNode(nodeId));
        }
    }

    @Override
    public int addNode() {
        ensureOpen();
        synchronized (nodes) {
            int id = nodes.size();
            nodes.add(newNode(id));
            return id;
        }
    }

    private Node node(int nodeId) {
        if (nodeId < 0 || nodeId >= nodes.size()) {
            throw new CroupierException(ErrorCode.BAD_INPUT,
                    "node " + nodeId + " does not exist; nodes are 0.." + (nodes.size() - 1));
        }
        return nodes.get(nodeId);
    }

    @Override
    public List<Integer> aliveNodes() {
        List<Integer> ids = new ArrayList<>();
        for (Node n : nodes) {
            if (n.alive()) {
                ids.add(n.id);
            }
        }
        return ids;
    }

    @Override
    public long objectStoreBytes() {
        return config.objectStoreBytes();
    }

    @Override
    public long objectCount() {
        long n = 0;
        for (ObjectEntry e : table.values()) {
            if (e.isAvailable()) {
                n++;
            }
        }
        return n;
    }

    @Override
    public ClusterStats stats() {
        List<ClusterStats.NodeStats> nodeStats = new ArrayList<>();
        for (Node n : nodes) {
            long objects = 0;
            StoreMetrics m = null;
            if (n.alive()) {
                try {
                    objects = n.store().objectCount();
                    m = n.store().metrics();
                } catch (IllegalStateException | StoreClosedException closedUnderUs) {
                    m = null;
                }
            }
            nodeStats.add(new ClusterStats.NodeStats(n.id, n.alive(), n.tasksRun(), objects,
                    m == null ? 0 : m.bytesInMemory(), m == null ? 0 : m.bytesSpilled(),
                    m == null ? 0 : m.bytesRestored(), n.bytesFetched()));
        }
        return new ClusterStats(stats.snapshot(), nodeStats);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Node n : nodes) {
            n.kill();
        }
        // Tasks were interrupted; wait for them to return so that nothing a task does (a file it
        // writes, memory it touches) happens after close, where the caller cleans up after a
        // failed job. Bounded: a task that ignores interrupts must not hang close.
        long deadline = System.nanoTime() + CLOSE_WAIT_MILLIS * 1_000_000L;
        for (Node n : nodes) {
            n.awaitStopped(Math.max(0, (deadline - System.nanoTime()) / 1_000_000L));
        }
        CroupierException gone = new CroupierException(ErrorCode.CLOSED, "the cluster was closed");
        for (ObjectEntry e : table.values()) {
            Trampoline.runAll(e.markFailed(gone, completionSeq.incrementAndGet()));
        }
        table.clear();
        deleteTree(spillRoot);
    }

    /** Longest {@link #close} waits for interrupted tasks to return. */
    static final long CLOSE_WAIT_MILLIS = 30_000;

    private static void deleteTree(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException ignored) {
            // best effort: the stores already removed their own files
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new CroupierException(ErrorCode.CLOSED, "the cluster is closed");
        }
    }
}
