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
import java.lang.foreign.MemorySegment;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The owner of a driver's tasks and objects, over either backend: the engine behind
 * {@link Cluster#builder()} and {@link Cluster#connect}.
 *
 * <p>Design. After Ray's ownership model, the driver owns everything its tasks make: it keeps
 * an {@link OwnedObject} per live object and a {@link TaskSpec} per task, which together are
 * the lineage, plus reference counts, locations and placement. Nodes only run attempts and
 * hold copies, and speak to the owner through the id-based node protocol of {@link Backend}:
 * an {@link AttemptCall} goes out, one {@link AttemptOutcome} comes back. A submitted task
 * waits for its dependencies through callbacks on their entries, is placed (hard affinity,
 * soft affinity, data locality, least load) and dispatched. The node resolves arguments
 * (pulling remote copies into its own store, or answering that an argument is lost), runs the
 * function, stores the results, and reports; completion marks the outputs ready, which wakes
 * the dependents. Node death loses the node's objects and its attempts: attempts are
 * resubmitted; objects are rebuilt lazily, when something needs them, by re-running their
 * creators recursively. An outcome of an attempt the owner no longer counts in flight on that
 * node (the node was declared dead, or the attempt cancelled) is ignored. Callbacks run on the
 * thread that settled an entry, through a per-thread trampoline so long chains never deepen
 * the stack.
 *
 * <p>Placement lives in {@link Placement}, the node side of an attempt in {@link NodeRuntime},
 * {@code wait} in {@link Waits}. What stays here is the owner's state machine (submit,
 * complete, fail, retry, cancel, rebuild, free), longer than most classes because it reads
 * best in one place. Thread-safe.
 */
public final class OwnerCluster implements Cluster, Backend.Events {

    private final ValueCodecs codecs;
    private final Backend backend;
    private final int cpusPerNode;
    private final int smallObjectBytes;
    private final long clusterTag;
    private final AtomicLong nextObject = new AtomicLong();
    private final AtomicLong nextTask = new AtomicLong();
    private final AtomicLong nextAttempt = new AtomicLong();
    private final AtomicLong completionSeq = new AtomicLong();
    private final EntryTable table;
    private final CopyOnWriteArrayList<NodeLink> nodes = new CopyOnWriteArrayList<>();
    private final TaskStatsRecorder stats = new TaskStatsRecorder();
    /** Attempts dispatched again: after a node loss, a failed attempt, or a lost argument. */
    private final AtomicLong retriedTasks = new AtomicLong();
    /** Objects rebuilt from lineage because every copy was lost. */
    private final AtomicLong rebuiltObjects = new AtomicLong();
    /** Per node incarnation lost, in order of detection: seconds from its loss to its detection. */
    private final CopyOnWriteArrayList<Double> detectionSeconds = new CopyOnWriteArrayList<>();
    private final Placement placement;
    /** Ready tasks that prefer no node, oldest first, until a node has room ({@link #fill}). */
    private final ConcurrentLinkedQueue<TaskSpec.Ready> unplaced = new ConcurrentLinkedQueue<>();
    /** Orders ready tasks across the waiting lists ({@link TaskSpec.Ready#seq}). */
    private final AtomicLong readySeq = new AtomicLong();
    private volatile boolean closed;

    /**
     * Starts what {@code config} describes: node processes to connect to, node processes to
     * start on this machine, or (neither) an embedded cluster of node runtimes in this JVM.
     */
    public static Cluster start(ClusterConfig config) {
        ValueCodecs codecs = new ValueCodecs(config.codecs(), config.serializableAllowList());
        long tag = EmbeddedBackend.newTag();
        Backend backend;
        if (!config.addresses().isEmpty() || config.processes() > 0) {
            byte[] codecFrame = shippedCodecs(codecs, config);
            NodeProcesses processes = null;
            List<String> addresses = config.processes() > 0 ? List.of() : config.resolver().apply(config.addresses());
            if (config.processes() > 0) {
                processes = new NodeProcesses(config.processes(), config::cpusOf, config.objectStoreBytes(),
                        config.memoryDirectory(), config.spillDirectory(), config.tokenFile());
                List<String> started;
                try {
                    started = processes.startAll(config.processes());
                } catch (RuntimeException e) {
                    processes.close();
                    throw e;
                }
                addresses = started;
            }
            backend = new ProcessBackend(addresses, codecs, codecFrame, config.serializableAllowList(), tag,
                    config.smallObjectBytes(), config.heartbeatTimeout(), CallToken.of(config.tokenFile()),
                    processes == null ? TlsFiles.client(config.tlsAuthority()) : null, processes,
                    processes == null ? new ProcessBackend.Membership(config.addresses(), config.resolver(),
                            config.resolveEvery()) : null);
        } else {
            backend = new EmbeddedBackend(config, codecs, tag);
        }
        OwnerCluster owner;
        try {
            owner = new OwnerCluster(codecs, backend, tag, config.smallObjectBytes());
        } catch (RuntimeException | Error e) {
            backend.close(); // the nodes that started, and the claim on the spill folder
            throw e;
        }
        if (config.metricsPort() >= 0) {
            try {
                owner.metrics = MetricsEndpoint.driver("127.0.0.1", config.metricsPort(), owner::stats);
            } catch (RuntimeException e) {
                owner.close();
                throw e;
            }
        }
        return owner;
    }

    /**
     * The session's codecs as node processes receive them: the registration-ordered map,
     * Java-serialized (codec ids are positions in it, so they agree on both sides).
     */
    private static byte[] shippedCodecs(ValueCodecs codecs, ClusterConfig config) {
        if (config.codecs().isEmpty()) {
            return new byte[0];
        }
        try {
            ValueCodecs.Encoded encoded = codecs.encode(new java.util.LinkedHashMap<>(config.codecs()));
            byte[] frame = new byte[Math.toIntExact(encoded.size())];
            encoded.writeTo(MemorySegment.ofArray(frame));
            return frame;
        } catch (CroupierException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "Cluster.Builder.codec: codecs travel to node processes,"
                    + " so each must be Serializable: " + e.getMessage(), e);
        }
    }

    /**
     * Owns the tasks and objects of one driver session on {@code backend}'s nodes.
     *
     * @param sessionTag the high half of every object id, unique per session on the nodes
     */
    OwnerCluster(ValueCodecs codecs, Backend backend, long sessionTag, int smallObjectBytes) {
        this.codecs = codecs;
        this.backend = backend;
        this.clusterTag = sessionTag;
        this.table = new EntryTable(sessionTag, nextObject::get);
        this.smallObjectBytes = smallObjectBytes;
        this.placement = new Placement(nodes, smallObjectBytes);
        nodes.addAll(backend.start(this));
        this.cpusPerNode = nodes.stream().mapToInt(n -> n.cpus).max().orElse(1);
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
        return new OwnedTaskBuilder<>(this, TaskNames.of(fn), fn, invocation, args);
    }

    <T> List<ObjectRef<T>> submit(OwnedTaskBuilder<?> b, int numReturns, boolean multi) {
        ensureOpen();
        if (b.cpus > cpusPerNode) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + b.name + "' asks for " + b.cpus
                    + " cpus but the largest node has " + cpusPerNode);
        }
        NodeLink pinned = b.affinity == Affinity.HARD && b.affinityNode >= 0 && b.affinityNode < nodes.size()
                ? nodes.get(b.affinityNode) : null;
        if (pinned != null && pinned.cpus < b.cpus) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + b.name + "' asks for " + b.cpus
                    + " cpus but node " + b.affinityNode + " has " + pinned.cpus + " (hard affinity)");
        }
        OwnedObject[] deps = dependencies(b.args, b.name);
        TaskSpec spec = new TaskSpec(nextTask.incrementAndGet(), b.name, function(b),
                backend.encodes() ? CodeFingerprint.of((Serializable) b.function) : null,
                specArguments(b.args, b.name, deps), deps, putArguments(b.args, deps), multi, b.affinityNode, b.affinity,
                b.maxRetries, b.retryExceptions, b.cpus);
        OwnedObject[] outputs = new OwnedObject[numReturns];
        List<ObjectRef<T>> refs = new ArrayList<>(numReturns);
        for (int i = 0; i < numReturns; i++) {
            outputs[i] = new OwnedObject(newObjectId(), spec, i);
            table.put(outputs[i]);
            refs.add(new OwnedRef<>(this, outputs[i]));
        }
        spec.outputs = outputs;
        for (OwnedObject dep : deps) {
            dep.addTaskUse();
        }
        submitSpec(spec);
        return refs;
    }

    /**
     * Encoded functions of stateless task bodies (a lambda that captures nothing, a static
     * method reference), by the body's class: their bytes never change, so they are encoded
     * once, and nodes may keep one decoded copy.
     */
    private static final ClassValue<java.util.concurrent.atomic.AtomicReference<Payload>> STATELESS =
            new ClassValue<>() {
                /** Null for a body class with instance fields: its bytes vary with what it captured. */
                @Override
                protected java.util.concurrent.atomic.AtomicReference<Payload> computeValue(Class<?> type) {
                    boolean captures = java.util.Arrays.stream(type.getDeclaredFields())
                            .anyMatch(f -> !java.lang.reflect.Modifier.isStatic(f.getModifiers()));
                    return captures ? null : new java.util.concurrent.atomic.AtomicReference<>();
                }
            };

    private Payload function(OwnedTaskBuilder<?> b) {
        if (!backend.encodes()) {
            return new Payload.Live(b.invocation);
        }
        java.util.concurrent.atomic.AtomicReference<Payload> cached = STATELESS.get(b.function.getClass());
        if (cached == null) {
            return payload(b.invocation, b.name, "its function");
        }
        Payload p = cached.get();
        if (p == null) {
            Payload.Encoded encoded = (Payload.Encoded) payload(b.invocation, b.name, "its function");
            p = new Payload.Encoded(encoded.frame(), true);
            cached.set(p);
        }
        return p;
    }

    /**
     * A function or plain argument as the backend carries it: encoded once, here, where the
     * backend's messages cross a process boundary, so whatever cannot travel is refused at
     * submission with the class named.
     */
    private Payload payload(Object value, String taskName, String what) {
        if (!backend.encodes()) {
            return new Payload.Live(value);
        }
        ValueCodecs.Encoded encoded;
        try {
            encoded = codecs.encode(value);
        } catch (CroupierException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + taskName + "': " + what
                    + " cannot be sent to a node: " + e.getMessage(), e);
        }
        byte[] frame = new byte[Math.toIntExact(encoded.size())];
        encoded.writeTo(MemorySegment.ofArray(frame));
        return new Payload.Encoded(frame, false);
    }

    /**
     * The arguments as a spec keeps them: a plain value as a payload, a ref as its entry, a ref
     * list as an array of entries. No ref is kept, so a ref its caller dropped is collected (its
     * entry lives on in the lineage; a put object's ref is kept apart, {@link #putArguments}):
     * at 100 TB, refs held by specs were 70 of the driver's 170 bytes per object. A list whose
     * entries are {@code deps} shares that array (a merge's or a reducer's one list of distinct
     * refs). Call after {@link #dependencies}, which checked the refs.
     */
    private Object[] specArguments(Object[] args, String taskName, OwnedObject[] deps) {
        Object[] out = new Object[args.length];
        for (int i = 0; i < args.length; i++) {
            Object arg = args[i];
            if (arg instanceof ObjectRef<?> ref) {
                out[i] = ((OwnedRef<?>) ref).entry;
            } else if (arg instanceof RefList<?> list) {
                OwnedObject[] entries = new OwnedObject[list.refs().size()];
                for (int j = 0; j < entries.length; j++) {
                    entries[j] = ((OwnedRef<?>) list.refs().get(j)).entry;
                }
                out[i] = java.util.Arrays.equals(entries, deps) ? deps : entries;
            } else {
                out[i] = payload(arg, taskName, "argument " + (i + 1));
            }
        }
        return out;
    }

    /**
     * The refs among the arguments to objects made by {@code put}, or null if none: the spec
     * keeps them ({@link TaskSpec#putArguments}). The arguments are searched only when one of
     * their entries, {@code deps}, is a put's, which few tasks have.
     */
    private static ObjectRef<?>[] putArguments(Object[] args, OwnedObject[] deps) {
        boolean anyPut = false;
        for (OwnedObject dep : deps) {
            anyPut |= dep.creator == null;
        }
        if (!anyPut) {
            return null;
        }
        List<ObjectRef<?>> puts = new ArrayList<>(2);
        for (Object arg : args) {
            if (arg instanceof ObjectRef<?> ref) {
                addIfPut(ref, puts);
            } else if (arg instanceof RefList<?> list) {
                for (ObjectRef<?> ref : list.refs()) {
                    addIfPut(ref, puts);
                }
            }
        }
        return puts.isEmpty() ? null : puts.toArray(new ObjectRef<?>[0]);
    }

    private static void addIfPut(ObjectRef<?> ref, List<ObjectRef<?>> puts) {
        if (((OwnedRef<?>) ref).entry.creator == null) {
            puts.add(ref);
        }
    }

    /**
     * The distinct entries among the arguments. Ref lists are mostly made in the order their
     * refs were, so ids come increasing and hold no repeat; only lists that do not are checked
     * for repeats with a map (an identity hash per entry was a sixth of a 100 TB merge's
     * submission).
     */
    private OwnedObject[] dependencies(Object[] args, String taskName) {
        int n = 0;
        for (Object arg : args) {
            if (arg instanceof ObjectRef<?>) {
                n++;
            } else if (arg instanceof RefList<?> list) {
                n += list.refs().size();
            }
        }
        OwnedObject[] deps = new OwnedObject[n];
        int i = 0;
        for (Object arg : args) {
            if (arg instanceof ObjectRef<?> ref) {
                deps[i++] = entryOf(ref, taskName);
            } else if (arg instanceof RefList<?> list) {
                for (ObjectRef<?> ref : list.refs()) {
                    deps[i++] = entryOf(ref, taskName);
                }
            }
        }
        boolean increasing = true;
        for (int j = 1; j < n && increasing; j++) {
            increasing = deps[j].seq > deps[j - 1].seq;
        }
        if (increasing) {
            return deps;
        }
        IdentityHashMap<OwnedObject, Boolean> distinct = new IdentityHashMap<>(n);
        for (OwnedObject dep : deps) {
            distinct.put(dep, Boolean.TRUE);
        }
        return distinct.size() == n ? deps : distinct.keySet().toArray(new OwnedObject[0]);
    }

    private OwnedObject entryOf(ObjectRef<?> ref, String taskName) {
        // unneeded() first: it is one entry's monitor, the table a lookup among millions
        if (!(ref instanceof OwnedRef<?> owned) || owned.owner() != this
                || owned.entry.unneeded() && table.get(owned.entry.id()) == null) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + taskName + "': argument " + ref
                    + " does not belong to this cluster or was released");
        }
        return owned.entry;
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
        for (OwnedObject dep : spec.deps) {
            if (dep.whenSettled(() -> depSettled(spec, gen, dep))) {
                rebuild(dep);
            }
        }
        depSettled(spec, gen, null);
    }

    private void depSettled(TaskSpec spec, int gen, OwnedObject dep) {
        if (dep != null && dep.state() == OwnedObject.State.FAILED) {
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

    /**
     * Places a ready task: on the node it prefers ({@link Placement#preferred}), else on any
     * node, each as soon as that node has room ({@link NodeLink#hasRoom}); until then it waits
     * at the owner, on its node's list or {@link #unplaced}.
     */
    private void schedule(TaskSpec spec, int gen) {
        TaskSpec.Ready ready = new TaskSpec.Ready(spec, gen, readySeq.incrementAndGet());
        boolean hard = spec.pinnedToNode();
        NodeLink node = placement.preferred(spec);
        if (hard && (node == null || !node.alive() || node.cpus < spec.cpus)) {
            failUnplaceable(ready);
            return;
        }
        if (node == null) {
            // the least loaded node has room if any has; one that frees a slot later takes it itself
            NodeLink least = placement.leastLoaded(spec.cpus);
            if (least == null) {
                failUnplaceable(ready);
                return;
            }
            unplaced.add(ready);
            fill(least);
            return;
        }
        if (!node.await(ready, hard)) {
            schedule(spec, gen); // it died since: placed elsewhere, or failed if it had to be there
            return;
        }
        fill(node);
        if (!hard && node.stealable() > 0) {
            for (NodeLink other : nodes) {
                if (other != node && other.hasRoom()) {
                    fill(other);
                }
            }
        }
    }

    /** Fails a ready task no live node can run, naming why. */
    private void failUnplaceable(TaskSpec.Ready ready) {
        TaskSpec spec = ready.spec();
        String why = spec.pinnedToNode()
                ? "node " + spec.affinityNode + " (hard affinity) is not alive"
                : spec.cpus > 1 && placement.leastLoaded() != null
                ? "no live node has " + spec.cpus + " cpus"
                : "no node is alive";
        failSpec(spec, ready.generation(), TaskSpec.State.WAITING,
                new TaskFailedException(spec.name, spec.affinityNode, spec + " cannot run: " + why, null));
    }

    /**
     * Dispatches waiting tasks to {@code node} while it has room: the oldest of those that wait
     * for it and those that wait for any node, then those that would rather run on a busier
     * node.
     */
    private void fill(NodeLink node) {
        while (node.hasRoom()) {
            TaskSpec.Ready any = node.placeable() ? unplaced.peek() : null;
            if (any != null && any.spec().cpus > node.cpus) {
                any = null; // a node with the slots takes it
            }
            TaskSpec.Ready next = node.nextWaiting(any);
            if (next == null && any != null) {
                if (!unplaced.remove(any)) {
                    continue; // another node took it: look again
                }
                next = any;
            }
            if (next == null && node.placeable()) {
                next = stealFor(node);
            }
            if (next == null) {
                return;
            }
            dispatch(next, node);
        }
    }

    /**
     * The oldest movable task that fits {@code thief}, from the node with the most of them
     * waiting, or failing that the next. A task found to have its arguments on its node is not
     * moved but kept there (found at most once each), as {@code docs/architecture.md} says under
     * "Room".
     */
    private TaskSpec.Ready stealFor(NodeLink thief) {
        BitSet tried = null; // victims with nothing to give, made only when one had none
        while (true) {
            NodeLink victim = null;
            int most = 0;
            for (NodeLink n : nodes) {
                int waiting = n == thief || tried != null && tried.get(n.id) ? 0 : n.stealable();
                if (waiting > most) {
                    victim = n;
                    most = waiting;
                }
            }
            if (victim == null) {
                return null;
            }
            NodeLink from = victim;
            TaskSpec.Ready ready = victim.steal(thief.cpus, r -> placement.holdsArguments(r.spec(), from));
            if (ready != null) {
                return ready;
            }
            if (tried == null) {
                tried = new BitSet(nodes.size());
            }
            tried.set(victim.id);
        }
    }

    /** Sends a ready task to {@code node}, unless it was cancelled or resubmitted since; placed again if the node died. */
    private void dispatch(TaskSpec.Ready ready, NodeLink node) {
        TaskSpec spec = ready.spec();
        TaskSpec.Attempt attempt = new TaskSpec.Attempt(nextAttempt.incrementAndGet(), spec, node);
        synchronized (spec) {
            if (spec.generation != ready.generation() || spec.state != TaskSpec.State.WAITING) {
                return;
            }
            spec.state = TaskSpec.State.DISPATCHED;
            spec.current = attempt;
        }
        attempt.call = call(attempt);
        if (node.add(attempt)) {
            backend.dispatch(node, attempt.call);
            return;
        }
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.DISPATCHED) {
                return;
            }
            spec.state = TaskSpec.State.WAITING;
            spec.current = null;
        }
        schedule(spec, ready.generation());
    }

    /** The attempt in protocol form: ids, payloads, and the argument locations known now. */
    private AttemptCall call(TaskSpec.Attempt attempt) {
        TaskSpec spec = attempt.spec;
        Object[] args = new Object[spec.args.length];
        for (int i = 0; i < args.length; i++) {
            Object arg = spec.args[i];
            if (arg instanceof OwnedObject entry) {
                args[i] = entry.asArgument();
            } else if (arg instanceof OwnedObject[] entries) {
                AttemptCall.Ref[] refs = new AttemptCall.Ref[entries.length];
                for (int j = 0; j < refs.length; j++) {
                    refs[j] = entries[j].asArgument();
                }
                args[i] = new AttemptCall.RefList(refs);
            } else {
                args[i] = arg;
            }
        }
        ObjectId[] outputs = new ObjectId[spec.outputs.length];
        for (int i = 0; i < outputs.length; i++) {
            outputs[i] = spec.outputs[i].id();
        }
        return new AttemptCall(attempt.id, spec.name, spec.cpus, spec.function, args, outputs, spec.multiReturn,
                spec.code);
    }

    // ---------------------------------------------------------------- outcomes

    @Override
    public void outcome(NodeLink node, AttemptOutcome outcome) {
        for (ObjectId copy : outcome.copies()) {
            OwnedObject entry = table.get(copy);
            if (entry == null || !entry.addLocation(node)) {
                deleteQuietly(node, copy); // freed while the node pulled it
            }
        }
        TaskSpec.Attempt attempt = node.remove(outcome.attemptId());
        if (attempt == null) {
            return; // the node was declared dead, or the attempt cancelled
        }
        fill(node);
        TaskSpec spec = attempt.spec;
        stats.record(spec.name, node.id, outcome.kind() == AttemptOutcome.Kind.FAILED, outcome.queueNanos(),
                outcome.wallNanos(), outcome.cpuNanos(), outcome.bytesIn(), outcome.bytesOut());
        if (outcome.kind() == AttemptOutcome.Kind.COMPLETED && OutcomeTap.armedFor(spec.name)) {
            OutcomeTap.fire(spec.name, new OutcomeTap.Event() {
                @Override
                public Cluster cluster() {
                    return OwnerCluster.this;
                }

                @Override
                public int nodeId() {
                    return node.id;
                }

                @Override
                public long pid(int nodeId) {
                    return backend instanceof ProcessBackend process ? process.pid(nodeId) : -1;
                }
            });
        }
        switch (outcome.kind()) {
            case COMPLETED -> complete(attempt, outcome.sizes(), outcome.values());
            case FAILED -> attemptFailed(attempt, outcome.error());
            case ARGUMENT_LOST -> requeue(attempt, outcome.lost());
        }
    }

    @Override
    public void nodeFound(String address, java.util.function.IntFunction<NodeLink> connect) {
        if (closed) {
            return;
        }
        NodeLink link;
        synchronized (nodes) {
            int id = nodes.size();
            for (NodeLink n : nodes) {
                if (n.address.equals(address)) {
                    if (n.alive()) {
                        return;
                    }
                    id = n.id; // a new incarnation at a lost node's address takes its id
                }
            }
            link = connect.apply(id);
            if (id == nodes.size()) {
                nodes.add(link);
            } else {
                nodes.set(id, link);
            }
        }
        fill(link);
    }

    @Override
    public void nodeDied(NodeLink node, long silentNanos) {
        resubmit(node, node.die(), silentNanos);
    }

    @Override
    public void nodeDraining(NodeLink node) {
        node.drain();
        for (TaskSpec.Ready ready : node.takeWaiting(false)) {
            schedule(ready.spec(), ready.generation());
        }
    }

    /**
     * Counts a node's loss and sends its attempts elsewhere, each spending a retry; nothing if
     * the loss was already handled ({@code lost} is null).
     */
    private void resubmit(NodeLink node, List<TaskSpec.Attempt> lost, long detectionNanos) {
        if (lost == null) {
            return;
        }
        detectionSeconds.add(detectionNanos / 1e9);
        for (TaskSpec.Attempt attempt : lost) {
            TaskSpec spec = attempt.spec;
            boolean resubmit;
            synchronized (spec) {
                if (spec.current != attempt || spec.state != TaskSpec.State.DISPATCHED) {
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
                retriedTasks.incrementAndGet();
                stats.retried(spec.name);
                submitSpec(spec);
            } else {
                releaseDeps(spec);
                failOutputs(spec, new TaskFailedException(spec.name, node.id, node + " died while running "
                        + spec + ", which has used its " + spec.maxRetries + " retries", null));
            }
        }
        for (TaskSpec.Ready ready : node.takeWaiting(true)) {
            schedule(ready.spec(), ready.generation());
        }
        // a task that waits for any node fails once no live node can run it
        for (TaskSpec.Ready ready : unplaced) {
            if (placement.leastLoaded(ready.spec().cpus) == null && unplaced.remove(ready)) {
                failUnplaceable(ready);
            }
        }
    }

    private void complete(TaskSpec.Attempt attempt, long[] sizes, byte[][] inline) {
        TaskSpec spec = attempt.spec;
        NodeLink node = attempt.node;
        boolean won;
        synchronized (spec) {
            won = spec.current == attempt && spec.state == TaskSpec.State.DISPATCHED;
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
        // The outputs settle together: a waiter on one finds its siblings ready, and none of
        // them freed yet. They are marked in order, so whoever sees the last one done, without
        // waiting, finds every one done (ObjectRef.byteSize; shuffle-lib's phase report reads a
        // task's output sizes so, on its last output). They share one place in the order of
        // completions (wait lists them by it), so that a task of many outputs takes the owner's
        // shared counter once, not once for each.
        long seq = completionSeq.incrementAndGet();
        Trampoline.settleTogether(() -> {
            for (int i = 0; i < spec.outputs.length; i++) {
                OwnedObject out = spec.outputs[i];
                byte[] frame = i < inline.length ? inline[i] : null;
                List<Runnable> waiters = frame != null ? out.markReadyInline(frame, seq)
                        : out.markReady(node, sizes[i], seq);
                if (waiters == OwnedObject.REJECTED) {
                    discardOutputs(node, new OwnedObject[] {out});
                } else {
                    Trampoline.runAll(waiters);
                }
            }
        }, () -> freeUnneeded(spec.outputs));
    }

    /** Frees each of {@code outputs} that nothing needs: settled with no ref or task left to read it. */
    private void freeUnneeded(OwnedObject[] outputs) {
        for (OwnedObject out : outputs) {
            if (out.unneeded()) {
                freeEntry(out);
            }
        }
    }

    /** Deletes the copies a superseded attempt wrote, except those the owner lists as this node's. */
    private void discardOutputs(NodeLink node, OwnedObject[] outputs) {
        for (OwnedObject out : outputs) {
            if (!out.isLocatedOn(node)) {
                deleteQuietly(node, out.id());
            }
        }
    }

    private void requeue(TaskSpec.Attempt attempt, ObjectId lostId) {
        TaskSpec spec = attempt.spec;
        OwnedObject lost = null;
        for (OwnedObject dep : spec.deps) {
            if (dep.id().equals(lostId)) {
                lost = dep;
            }
        }
        if (lost == null) {
            attemptFailed(attempt, new IllegalStateException(attempt.node + " reported argument " + lostId
                    + " lost, which " + spec + " does not read"));
            return;
        }
        int gen;
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.DISPATCHED) {
                return;
            }
            spec.state = TaskSpec.State.WAITING;
            spec.current = null;
            gen = ++spec.generation;
            spec.pendingDeps = 1;
        }
        retriedTasks.incrementAndGet();
        // The node found no copy where the call said: forget those locations (a later
        // location, unknown at dispatch, stays), so the next placement rebuilds or goes there.
        lost.removeLocations(attempt.call.refTo(lostId).nodes());
        OwnedObject dep = lost;
        if (dep.whenSettled(() -> depSettled(spec, gen, dep))) {
            rebuild(dep);
        }
    }

    private void attemptFailed(TaskSpec.Attempt attempt, Throwable cause) {
        TaskSpec spec = attempt.spec;
        NodeLink node = attempt.node;
        boolean retry;
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.DISPATCHED) {
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
            retriedTasks.incrementAndGet();
            submitSpec(spec);
            return;
        }
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

    /** Fails a task's outputs, settled together and in order, as {@link #complete} makes them ready. */
    private void failOutputs(TaskSpec spec, CroupierException error) {
        long seq = completionSeq.incrementAndGet();
        Trampoline.settleTogether(() -> {
            for (OwnedObject out : spec.outputs) {
                Trampoline.runAll(out.markFailed(error, seq));
            }
        }, () -> freeUnneeded(spec.outputs));
    }

    private void releaseDeps(TaskSpec spec) {
        for (OwnedObject dep : spec.deps) {
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
    void rebuild(OwnedObject entry) {
        if (!entry.markRebuilding()) {
            return;
        }
        table.put(entry);
        TaskSpec creator = entry.creator;
        if (creator == null) {
            Trampoline.runAll(entry.markFailed(new ObjectLostException(entry + " was on no live node; objects made by"
                    + " put cannot be rebuilt"), completionSeq.incrementAndGet()));
            return;
        }
        rebuiltObjects.incrementAndGet();
        boolean resubmit;
        synchronized (creator) {
            resubmit = creator.state == TaskSpec.State.DONE;
            if (resubmit) {
                creator.state = TaskSpec.State.WAITING;
            }
        }
        if (resubmit) {
            for (OwnedObject dep : creator.deps) {
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
        if (backend.encodes() && encoded.size() < smallObjectBytes) {
            // A small value stays with the owner, as a small task output does on this backend.
            byte[] frame = new byte[(int) encoded.size()];
            encoded.writeTo(MemorySegment.ofArray(frame));
            OwnedObject entry = new OwnedObject(newObjectId(), null, 0);
            table.put(entry);
            OwnedRef<T> ref = new OwnedRef<>(this, entry);
            entry.markReadyInline(frame, completionSeq.incrementAndGet());
            return ref;
        }
        while (true) {
            NodeLink node = placement.leastLoaded();
            if (node == null) {
                throw new CroupierException(ErrorCode.CLOSED, "no node is alive to put a value on");
            }
            OwnedObject entry = new OwnedObject(newObjectId(), null, 0);
            try {
                long size = backend.put(node, entry.id(), encoded);
                table.put(entry);
                OwnedRef<T> ref = new OwnedRef<>(this, entry);
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

    Object getValue(OwnedObject entry, Duration timeout, OwnedRef.Release release) {
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
                switch (entry.state()) {
                    case FAILED -> throw entry.error();
                    case FREED -> throw new IllegalStateException("ref to " + entry.id() + " was released");
                    default -> { }
                }
                byte[] inline = entry.inline();
                if (inline != null) {
                    return codecs.decode(MemorySegment.ofArray(inline));
                }
                NodeLink node = entry.liveLocation(null);
                if (node == null) {
                    rebuild(entry);
                    continue;
                }
                NodeStore.Reading reading;
                try {
                    reading = backend.read(node, entry.id());
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

    void dropHandle(OwnedObject entry, OwnedRef.Release release) {
        if (entry.dropHandle(release)) {
            freeEntry(entry);
        }
    }

    private void freeEntry(OwnedObject entry) {
        NodeLink[] copies = entry.free();
        if (copies == null) {
            return;
        }
        table.remove(entry);
        for (NodeLink n : copies) {
            deleteQuietly(n, entry.id());
        }
        if (copies.length == 0) { // pending (or held by the owner): it may have waiters
            Trampoline.runAll(entry.takeWaitersOfFreed());
        }
    }

    private void deleteQuietly(NodeLink node, ObjectId id) {
        if (node.alive()) {
            backend.free(node, id);
        }
    }

    @Override
    public <T> WaitResult<T> wait(List<? extends ObjectRef<T>> refs, int numReady, Duration timeout) {
        if (numReady < 0 || numReady > refs.size()) {
            throw new CroupierException(ErrorCode.BAD_INPUT,
                    "wait: numReady = " + numReady + " is out of range; allowed: 0.." + refs.size());
        }
        List<OwnedRef<T>> owned = new ArrayList<>(refs.size());
        for (ObjectRef<T> ref : refs) {
            entryOf(ref, "wait");
            owned.add((OwnedRef<T>) ref);
        }
        return Waits.await(owned, numReady, timeout);
    }

    @Override
    public boolean cancel(ObjectRef<?> ref) {
        TaskSpec spec = entryOf(ref, "cancel").creator;
        if (spec == null) {
            return false;
        }
        TaskSpec.Attempt current;
        synchronized (spec) {
            if (spec.isFinished()) {
                return false;
            }
            spec.state = TaskSpec.State.CANCELLED;
            current = spec.current;
            spec.current = null;
        }
        if (current != null && current.node.remove(current.id) != null) {
            backend.cancel(current.node, current.id);
            fill(current.node);
        }
        releaseDeps(spec);
        failOutputs(spec, new TaskCancelledException(spec + " was cancelled"));
        return true;
    }

    // ---------------------------------------------------------------- nodes

    @Override
    public void killNode(int nodeId) {
        NodeLink node = node(nodeId);
        // Declared dead first, so that what its interrupted tasks report is stale; the loss is
        // known the instant it happens.
        List<TaskSpec.Attempt> lost = node.die();
        backend.kill(node);
        resubmit(node, lost, 0);
    }

    @Override
    public void restartNode(int nodeId) {
        ensureOpen();
        synchronized (nodes) {
            if (node(nodeId).alive()) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "restartNode: node " + nodeId + " is alive");
            }
            nodes.set(nodeId, backend.startNode(nodeId));
        }
        fill(nodes.get(nodeId));
    }

    @Override
    public int addNode() {
        ensureOpen();
        int id;
        synchronized (nodes) {
            id = nodes.size();
            nodes.add(backend.startNode(id));
        }
        fill(nodes.get(id));
        return id;
    }

    private NodeLink node(int nodeId) {
        if (nodeId < 0 || nodeId >= nodes.size()) {
            throw new CroupierException(ErrorCode.BAD_INPUT,
                    "node " + nodeId + " does not exist; nodes are 0.." + (nodes.size() - 1));
        }
        return nodes.get(nodeId);
    }

    @Override
    public List<Integer> aliveNodes() {
        List<Integer> ids = new ArrayList<>();
        for (NodeLink n : nodes) {
            if (n.placeable()) {
                ids.add(n.id);
            }
        }
        return ids;
    }

    /** This driver's /metrics, or null. */
    private volatile MetricsEndpoint metrics;

    @Override
    public int metricsPort() {
        MetricsEndpoint m = metrics;
        return m == null ? -1 : m.port();
    }

    @Override
    public long objectStoreBytes() {
        return backend.objectStoreBytes();
    }

    @Override
    public long objectCount() {
        long[] available = {0};
        table.forEach(e -> {
            if (e.isAvailable()) {
                available[0]++;
            }
        });
        return available[0];
    }

    /** Objects the owner tracks: live ones and those whose tasks are still to run. */
    int liveEntries() {
        return table.size();
    }

    @Override
    public ClusterStats stats() {
        List<ClusterStats.NodeStats> nodeStats = new ArrayList<>();
        for (NodeLink n : nodes) {
            nodeStats.add(backend.stats(n));
        }
        return new ClusterStats(stats.snapshot(), nodeStats, new ClusterStats.Failures(retriedTasks.get(),
                rebuiltObjects.get(), detectionSeconds.size(), List.copyOf(detectionSeconds)), unplaced.size());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (metrics != null) {
            metrics.close();
        }
        for (NodeLink n : nodes) {
            n.die();
        }
        backend.close();
        unplaced.clear();
        CroupierException gone = new CroupierException(ErrorCode.CLOSED, "the cluster was closed");
        table.forEach(e -> Trampoline.runAll(e.markFailed(gone, completionSeq.incrementAndGet())));
        table.clear();
    }

    private void ensureOpen() {
        if (closed) {
            throw new CroupierException(ErrorCode.CLOSED, "the cluster is closed");
        }
    }
}
