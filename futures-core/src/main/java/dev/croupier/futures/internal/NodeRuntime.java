package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.StoreClosedException;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One node incarnation as it runs, the same in both backends: its CPU slots, task queue,
 * worker threads and object store. It takes {@link AttemptCall}s from driver sessions and
 * answers each with one {@link AttemptOutcome}; it knows nothing of the owner's state.
 *
 * <p>Design: a FIFO queue and a count of free CPU slots under the node's monitor; a task
 * starts when the slots it asks for are free, on one of {@code cpus} platform threads. The
 * first {@code cpus} queued tasks have their spilled arguments prefetched: they are the next to
 * run, so their restores, and pulls of their remote arguments, overlap the running tasks (up to
 * {@link #PULLS_AHEAD} pulls at once, as a running task's own list of arguments is). Prefetching for the whole queue would
 * restore more than memory holds and evict what is about to be used (a reduce phase queues
 * every reducer at once). A worker resolves arguments from its own store, reads them in place
 * in the store of a node of its own process or, borrowed, in the memory of a node on its host,
 * or pulls them from a location the call names ({@link NodeSession.Peers}); an argument on none
 * of them is reported lost, and the owner
 * rebuilds it and dispatches again. Results are encoded into the store (or
 * sealed in place, see {@code TaskOutput}). Byte buffer and segment arguments are read-only
 * views pinned for the duration of the call. Thread-safe.
 */
final class NodeRuntime {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    final int id;
    final int cpus;
    private final NodeStore store;
    private final ExecutorService workers;
    private final ArrayDeque<Running> queue = new ArrayDeque<>();
    private final Set<Running> running = new LinkedHashSet<>();
    private int freeCpus;
    private volatile boolean alive = true;
    private final LongAdder tasksRun = new LongAdder();
    private final LongAdder bytesFetched = new LongAdder();
    /** Pulls in flight on this node, by object: a second reader waits for the first's copy. */
    private final ConcurrentHashMap<ObjectId, CompletableFuture<Boolean>> pulling = new ConcurrentHashMap<>();
    /**
     * Pulls that run ahead of the worker that reads their objects: enough at once that one
     * pull's round trip hides behind another's copy, few enough not to flood the store.
     */
    static final int PULLS_AHEAD = 4;
    private final ExecutorService pullers;
    /** Copies pulled ahead, reported with the outcome of the first attempt that reads them. */
    private final ConcurrentHashMap<ObjectId, Boolean> pulledAhead = new ConcurrentHashMap<>();

    NodeRuntime(int id, int cpus, NodeStore store) {
        this.id = id;
        this.cpus = cpus;
        this.freeCpus = cpus;
        this.store = store;
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "croupier-node-" + id + "-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.workers = Executors.newFixedThreadPool(cpus, threads);
        AtomicInteger p = new AtomicInteger();
        this.pullers = Executors.newFixedThreadPool(PULLS_AHEAD,
                r -> Thread.ofPlatform().daemon().name("croupier-node-" + id + "-pull-" + p.incrementAndGet()).unstarted(r));
    }

    /** An attempt on this node: queued, then running. */
    static final class Running {
        final NodeSession session;
        final AttemptCall call;
        final long readyNanos = System.nanoTime();
        // guarded by the node's monitor
        boolean prefetched;
        // guarded by this
        private Thread thread;
        private boolean cancelled;

        Running(NodeSession session, AttemptCall call) {
            this.session = session;
            this.call = call;
        }

        synchronized boolean start() {
            if (cancelled) {
                return false;
            }
            thread = Thread.currentThread();
            return true;
        }

        synchronized void stop() {
            thread = null;
        }

        synchronized void cancel() {
            cancelled = true;
            if (thread != null) {
                thread.interrupt();
            }
        }
    }

    boolean alive() {
        return alive;
    }

    NodeStore store() {
        return store;
    }

    /** Queues an attempt; false if the node is dead. */
    boolean submit(NodeSession session, AttemptCall call) {
        Running r = new Running(session, call);
        synchronized (this) {
            if (!alive) {
                return false;
            }
            session.attempts.put(call.attemptId(), r);
            queue.add(r);
        }
        pump();
        return true;
    }

    /** Drops a queued attempt or interrupts a running one; its outcome, if any, is stale to the owner. */
    void cancel(NodeSession session, long attemptId) {
        Running r = session.attempts.remove(attemptId);
        if (r == null) {
            return;
        }
        boolean wasQueued;
        synchronized (this) {
            wasQueued = queue.remove(r);
        }
        r.cancel();
        if (wasQueued) {
            tasksRun.increment();
        }
    }

    /** Queued and running attempts, for load reports. */
    synchronized int queued() {
        return queue.size();
    }

    synchronized int running() {
        return running.size();
    }

    private void finished(Running r) {
        synchronized (this) {
            if (running.remove(r)) {
                freeCpus += r.call.cpus();
            }
            tasksRun.increment();
        }
        pump();
    }

    private void pump() {
        List<Running> start = null;
        List<Running> next = null;
        synchronized (this) {
            while (alive && !queue.isEmpty() && queue.peek().call.cpus() <= freeCpus) {
                Running r = queue.poll();
                freeCpus -= r.call.cpus();
                running.add(r);
                if (start == null) {
                    start = new ArrayList<>(2);
                }
                start.add(r);
            }
            int ahead = 0;
            for (Running r : queue) {
                if (ahead++ == cpus) {
                    break;
                }
                if (!r.prefetched) {
                    r.prefetched = true;
                    if (next == null) {
                        next = new ArrayList<>(cpus);
                    }
                    next.add(r);
                }
            }
        }
        if (next != null) {
            next.forEach(this::prefetchArguments);
        }
        if (start != null) {
            for (Running r : start) {
                try {
                    workers.execute(() -> run(r));
                } catch (RejectedExecutionException killedMeanwhile) {
                    return; // the owner resubmits what this incarnation held
                }
            }
        }
    }

    /**
     * Asks the store to restore a queued attempt's spilled arguments while it waits near the
     * head of the queue, so disk reads overlap other tasks' execution. Small values never spill.
     */
    private void prefetchArguments(Running r) {
        List<ObjectId> local = new ArrayList<>();
        for (Object arg : r.call.args()) {
            if (arg instanceof AttemptCall.Ref ref) {
                prefetch(ref, r.session, local);
            } else if (arg instanceof AttemptCall.RefList list) {
                for (AttemptCall.Ref ref : list.refs()) {
                    prefetch(ref, r.session, local);
                }
            }
        }
        try {
            store.prefetch(local);
        } catch (IllegalStateException | StoreClosedException diedMeanwhile) {
            // the owner resubmits the attempt; nothing to restore
        }
    }

    /**
     * Adds a held, stored argument to {@code local} for a restore, asks the node of this process
     * that holds a remote one to restore it where it will be read in place, or starts pulling it.
     */
    private void prefetch(AttemptCall.Ref ref, NodeSession session, List<ObjectId> local) {
        if (ref.inline() != null) {
            return;
        }
        if (store.contains(ref.id())) {
            if (store.isStored(ref.size())) {
                local.add(ref.id());
            }
            return;
        }
        NodeRuntime holder = holderInProcess(ref, session);
        if (holder == null) {
            if (lender(ref, session) < 0) {
                pullAhead(ref, session); // one that may be lent is borrowed when its attempt runs
            }
        } else if (holder.store.isStored(ref.size())) {
            try {
                holder.store.prefetch(List.of(ref.id()));
            } catch (IllegalStateException | StoreClosedException holderEnded) {
                // read in place fails over to a pull, or the argument is lost
            }
        }
    }

    /**
     * Starts pulling a remote argument on a pull thread, so the copies of an attempt's arguments
     * overlap each other and the tasks running meanwhile. The worker that reads it waits for
     * that pull ({@link #pull}) and reports the copy.
     */
    private void pullAhead(AttemptCall.Ref ref, NodeSession session) {
        if (pulling.containsKey(ref.id()) || holderInProcess(ref, session) != null) {
            return;
        }
        try {
            pullers.execute(() -> {
                try {
                    if (!store.contains(ref.id())) {
                        pull(ref, session, null);
                    }
                } catch (InterruptedException | IllegalStateException | StoreClosedException stopping) {
                    // the node is dying: the attempt is resubmitted elsewhere
                }
            });
        } catch (RejectedExecutionException killed) {
            // the node is dying: the attempt is resubmitted elsewhere
        }
    }

    // ---------------------------------------------------------------- one attempt

    private void run(Running r) {
        AttemptCall call = r.call;
        NodeSession session = r.session;
        if (!r.start()) {
            finished(r);
            return;
        }
        TaskCounts counts = countsByName.computeIfAbsent(call.name(), n -> new TaskCounts());
        counts.started().increment();
        TaskEvent event = jdk.jfr.FlightRecorder.isInitialized() ? new TaskEvent() : null; // see TaskEvent
        if (event != null) {
            event.begin();
        }
        long start = System.nanoTime();
        long cpuStart = THREADS.getCurrentThreadCpuTime();
        List<NodeStore.Reading> pins = new ArrayList<>(0);
        Resolving resolving = new Resolving(session);
        long[] sizes = null;
        byte[][] inline = session.inlineBelow > 0 ? new byte[call.outputs().length][] : AttemptOutcome.NO_VALUES;
        ObjectId lost = null;
        Throwable error = null;
        try {
            fetchRemoteArguments(call, session, resolving);
            Object[] values = new Object[call.args().length];
            for (int i = 0; i < values.length; i++) {
                Object arg = call.args()[i];
                if (arg instanceof AttemptCall.Ref ref) {
                    values[i] = readArgument(ref, pins, resolving);
                } else if (arg instanceof AttemptCall.RefList list) {
                    List<Object> items = new ArrayList<>(list.refs().length);
                    for (AttemptCall.Ref ref : list.refs()) {
                        items.add(readArgument(ref, pins, resolving));
                    }
                    values[i] = items;
                } else {
                    values[i] = ((Payload) arg).open(session.codecs);
                }
            }
            TaskSpec.Invocation function = (TaskSpec.Invocation) session.function(call.function());
            try (OutputScope scope = OutputScope.open(store)) {
                sizes = storeOutputs(call, session, function.invoke(values), scope, inline);
            }
        } catch (LostArgument e) {
            lost = e.id;
        } catch (Throwable t) {
            // an argument read in place whose node was killed meanwhile was unmapped under the
            // task: what it threw is the loss of that argument, not the task's failure
            lost = resolving.lostBorrowed();
            if (lost == null) {
                error = t instanceof java.lang.reflect.InvocationTargetException ite ? ite.getCause() : t;
            }
        } finally {
            pins.forEach(NodeStore.Reading::close);
            resolving.endLoans();
            r.stop();
            Thread.interrupted();
        }
        long bytesOut = 0;
        if (sizes != null) {
            for (long s : sizes) {
                bytesOut += s;
            }
        }
        AttemptOutcome.Kind kind = lost != null ? AttemptOutcome.Kind.ARGUMENT_LOST
                : error != null ? AttemptOutcome.Kind.FAILED : AttemptOutcome.Kind.COMPLETED;
        if (kind == AttemptOutcome.Kind.COMPLETED) {
            counts.finished().increment();
        } else if (kind == AttemptOutcome.Kind.FAILED) {
            counts.failed().increment();
        }
        if (event != null && event.shouldCommit()) {
            event.task = call.name();
            event.node = id;
            event.attempt = call.attemptId();
            event.outcome = kind.name();
            event.bytesOut = bytesOut;
            event.commit();
        }
        AttemptOutcome outcome = new AttemptOutcome(call.attemptId(), kind,
                sizes == null ? AttemptOutcome.NO_SIZES : sizes, error, lost, resolving.copies(),
                start - r.readyNanos, System.nanoTime() - start, THREADS.getCurrentThreadCpuTime() - cpuStart,
                resolving.bytesIn, bytesOut, sizes == null ? AttemptOutcome.NO_VALUES : inline);
        try {
            // A node killed or closing under the attempt does not report it: what the attempt
            // saw (an interrupt, a closed store) is the node's end, not the task's failure, and
            // the owner runs it again elsewhere once it counts the node lost.
            if (session.attempts.remove(call.attemptId(), r) && alive) {
                session.reports.report(this, call, outcome);
            }
        } finally {
            finished(r);
        }
    }

    /**
     * Starts fetching an attempt's remote arguments together: loans of those a node on this
     * host may lend ({@link #lender}), one call per lender for all it lends, and pulls of the
     * others when there is more than one, so the round trips overlap each other instead of
     * adding up.
     */
    private void fetchRemoteArguments(AttemptCall call, NodeSession session, Resolving resolving) {
        Remote remote = new Remote();
        for (Object arg : call.args()) {
            if (arg instanceof AttemptCall.Ref ref) {
                remote.add(ref, session);
            } else if (arg instanceof AttemptCall.RefList list) {
                for (AttemptCall.Ref ref : list.refs()) {
                    remote.add(ref, session);
                }
            }
        }
        if (remote.lent != null) {
            remote.lent.forEach((lender, each) -> {
                List<ObjectId> ids = List.copyOf(each);
                List<SameHost.Loan> loans = session.peers.borrow(ids, lender);
                for (int i = 0; loans != null && i < ids.size(); i++) {
                    resolving.borrow(ids.get(i), loans.get(i));
                }
            });
        }
        if (remote.pulled != null && remote.pulled.size() > 1) {
            remote.pulled.forEach(ref -> pullAhead(ref, session));
        }
    }

    /** An attempt's arguments held on other nodes: by the node that lends them, and the rest, to pull. */
    private final class Remote {
        /** Ids to borrow, each once (an argument may appear twice), by lender; null if none. */
        Map<Integer, Set<ObjectId>> lent;
        List<AttemptCall.Ref> pulled;

        void add(AttemptCall.Ref ref, NodeSession session) {
            if (ref.inline() != null || store.contains(ref.id()) || holderInProcess(ref, session) != null) {
                return;
            }
            int lender = lender(ref, session);
            if (lender >= 0) {
                if (lent == null) {
                    lent = new HashMap<>(4);
                }
                lent.computeIfAbsent(lender, n -> new LinkedHashSet<>()).add(ref.id());
                return;
            }
            if (pulled == null) {
                pulled = new ArrayList<>();
            }
            pulled.add(ref);
        }
    }

    /**
     * A node holding {@code ref} in its store that may lend it to be read in place (not known
     * to run on another host), or -1: then it is copied. Small values live on their holder's
     * heap, and objects under {@link SameHost#LEND_MIN_BYTES} cost less to copy than a loan's call.
     */
    private int lender(AttemptCall.Ref ref, NodeSession session) {
        if (!store.isStored(ref.size()) || ref.size() < SameHost.LEND_MIN_BYTES) {
            return -1;
        }
        for (int source : ref.nodes()) {
            if (source != session.self && session.peers.mayLend(source)) {
                return source;
            }
        }
        return -1;
    }

    /** What resolving an attempt's arguments read, pulled, and read in place on other nodes. */
    private static final class Resolving {
        final NodeSession session;
        long bytesIn;
        List<ObjectId> copies;
        /** Arguments read in place, each with the node whose store holds it. */
        List<Borrowed> borrowed;
        /** Arguments borrowed from nodes of this host, by id; null if none. */
        Map<ObjectId, SameHost.Loan> loans;

        record Borrowed(NodeRuntime holder, ObjectId id) {}

        Resolving(NodeSession session) {
            this.session = session;
        }

        void borrowed(NodeRuntime holder, ObjectId id) {
            if (borrowed == null) {
                borrowed = new ArrayList<>(2);
            }
            borrowed.add(new Borrowed(holder, id));
        }

        void borrow(ObjectId id, SameHost.Loan loan) {
            if (loans == null) {
                loans = new HashMap<>(4);
            }
            if (loans.putIfAbsent(id, loan) != null) {
                // the argument appears twice, with its locations read at two moments: each
                // lender was asked for it once, and one loan of it is enough
                loan.close();
            }
        }

        SameHost.Loan loan(ObjectId id) {
            return loans == null ? null : loans.get(id);
        }

        /** Ends every loan: the attempt is done with its arguments, or never read some. */
        void endLoans() {
            if (loans != null) {
                loans.values().forEach(SameHost.Loan::close);
            }
        }

        /** An argument read in place on a node that has ended since, or null. */
        ObjectId lostBorrowed() {
            if (borrowed != null) {
                for (Borrowed b : borrowed) {
                    if (!b.holder.alive()) {
                        return b.id;
                    }
                }
            }
            return null;
        }

        void copied(ObjectId id) {
            if (copies == null) {
                copies = new ArrayList<>(2);
            }
            copies.add(id);
        }

        ObjectId[] copies() {
            return copies == null ? AttemptOutcome.NO_COPIES : copies.toArray(new ObjectId[0]);
        }
    }

    /** An argument is on none of its locations: the owner rebuilds it. */
    private static final class LostArgument extends Exception {
        private static final long serialVersionUID = 1L;
        final transient ObjectId id;

        LostArgument(ObjectId id) {
            super(null, null, false, false);
            this.id = id;
        }
    }

    private Object readArgument(AttemptCall.Ref ref, List<NodeStore.Reading> pins, Resolving resolving)
            throws InterruptedException, LostArgument {
        if (ref.inline() != null) {
            resolving.bytesIn += ref.inline().length;
            return resolving.session.codecs.decode(MemorySegment.ofArray(ref.inline()));
        }
        NodeStore.Reading local = store.open(ref.id());
        if (local == null) {
            local = borrow(ref, resolving);
        }
        NodeStore.Reading reading = local != null || !pull(ref, resolving.session, resolving) ? local
                : store.open(ref.id());
        if (reading == null) {
            throw new LostArgument(ref.id());
        }
        if (pulledAhead.remove(ref.id()) != null) {
            resolving.copied(ref.id());
        }
        resolving.bytesIn += reading.frame().byteSize();
        ValueCodecs codecs = resolving.session.codecs;
        if (ValueCodecs.isView(reading.frame())) {
            pins.add(reading);
            return codecs.decode(reading.frame());
        }
        try (reading) {
            return codecs.decode(reading.frame());
        }
    }

    /**
     * Pins the argument where it is: in the store of a node of this process that holds it
     * ({@link #holderInProcess}), or, lent, in the memory of a node on this host
     * ({@link #fetchRemoteArguments}); null if neither (then it is pulled).
     */
    private NodeStore.Reading borrow(AttemptCall.Ref ref, Resolving resolving) throws InterruptedException {
        NodeRuntime holder = holderInProcess(ref, resolving.session);
        if (holder == null) {
            SameHost.Loan loan = resolving.loan(ref.id());
            return loan == null ? null : loan.await();
        }
        try {
            NodeStore.Reading reading = holder.store.open(ref.id());
            if (reading != null) {
                resolving.borrowed(holder, ref.id());
            }
            return reading;
        } catch (IllegalStateException | StoreClosedException holderEnded) {
            return null; // killed meanwhile: a pull from another location, or a lost argument
        }
    }

    /** A node of this process that holds {@code ref}, where it is read in place; null if none does. */
    private NodeRuntime holderInProcess(AttemptCall.Ref ref, NodeSession session) {
        for (int source : ref.nodes()) {
            NodeRuntime holder = source == session.self ? null : session.peers.inProcess(source);
            if (holder != null && holder.store.contains(ref.id())) {
                return holder;
            }
        }
        return null;
    }

    /**
     * Pulls a copy from the first location that has one; false if none does. Concurrent pulls
     * of one object on this node are one pull: the others wait for it and then read the copy.
     * The copy is reported by {@code resolving}'s attempt, or, pulled ahead, by the first
     * attempt that reads it.
     */
    private boolean pull(AttemptCall.Ref ref, NodeSession session, Resolving resolving) throws InterruptedException {
        CompletableFuture<Boolean> mine = new CompletableFuture<>();
        CompletableFuture<Boolean> theirs = pulling.putIfAbsent(ref.id(), mine);
        if (theirs != null) {
            try {
                return theirs.get();
            } catch (ExecutionException failed) {
                return false;
            }
        }
        boolean pulled = false;
        try {
            for (int source : ref.nodes()) {
                if (source == session.self) {
                    continue;
                }
                FetchEvent event = jdk.jfr.FlightRecorder.isInitialized() ? new FetchEvent() : null; // see TaskEvent
                if (event != null) {
                    event.begin();
                }
                long bytes = session.peers.pull(ref.id(), source, store);
                if (bytes >= 0) {
                    if (event != null && event.shouldCommit()) {
                        event.object = ref.id().toString();
                        event.node = id;
                        event.source = source;
                        event.bytes = bytes;
                        event.commit();
                    }
                    bytesFetched.add(bytes);
                    if (resolving != null) {
                        resolving.copied(ref.id());
                    } else {
                        pulledAhead.put(ref.id(), Boolean.TRUE);
                    }
                    pulled = true;
                    break;
                }
            }
        } finally {
            pulling.remove(ref.id(), mine);
            mine.complete(pulled);
        }
        return pulled;
    }

    private long[] storeOutputs(AttemptCall call, NodeSession session, Object result, OutputScope scope,
                                byte[][] inline) throws InterruptedException {
        ObjectId[] outputs = call.outputs();
        long[] sizes = new long[outputs.length];
        if (!call.multiReturn()) {
            sizes[0] = storeOutput(outputs[0], session, result, scope, inline, 0);
            return sizes;
        }
        if (!(result instanceof List<?> values) || values.size() != outputs.length) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "task '" + call.name() + "' has numReturns("
                    + outputs.length + ") but returned "
                    + (result instanceof List<?> l ? "a List of " + l.size() : String.valueOf(result)));
        }
        for (int i = 0; i < outputs.length; i++) {
            sizes[i] = storeOutput(outputs[i], session, values.get(i), scope, inline, i);
        }
        return sizes;
    }

    /**
     * Seals memory the task wrote in place, returns a small value inline to the owner, or
     * encodes the value into the store.
     */
    private long storeOutput(ObjectId output, NodeSession session, Object value, OutputScope scope,
                             byte[][] inline, int index) throws InterruptedException {
        NodeStore.Scratch scratch = scope.take(value);
        if (scratch != null) {
            return store.adopt(output, scratch);
        }
        ValueCodecs.Encoded encoded = session.codecs.encode(value);
        if (encoded.size() < session.inlineBelow) {
            byte[] frame = new byte[(int) encoded.size()];
            encoded.writeTo(MemorySegment.ofArray(frame));
            inline[index] = frame;
            return frame.length;
        }
        return store.put(output, encoded);
    }

    // ---------------------------------------------------------------- life

    /**
     * Ends this incarnation as a crash would: no new work, running tasks interrupted, the
     * store's memory and files released.
     */
    void kill() {
        List<Running> stopped;
        synchronized (this) {
            if (!alive) {
                return;
            }
            alive = false;
            stopped = new ArrayList<>(running);
            queue.clear();
            running.clear();
        }
        stopped.forEach(Running::cancel);
        workers.shutdownNow();
        pullers.shutdownNow();
        store.close();
    }

    /**
     * Waits up to {@code millis} for the tasks a {@link #kill} interrupted to return; a task
     * that ignores interrupts may outlive it. Returns whether every worker has stopped.
     */
    boolean awaitStopped(long millis) {
        try {
            return workers.awaitTermination(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    long tasksRun() {
        return tasksRun.sum();
    }

    /** Attempts of one task name on this node: started, and of those, finished and failed. */
    record TaskCounts(LongAdder started, LongAdder finished, LongAdder failed) {
        TaskCounts() {
            this(new LongAdder(), new LongAdder(), new LongAdder());
        }
    }

    /** By task name, since the node started; one entry per name, not per attempt. */
    private final ConcurrentHashMap<String, TaskCounts> countsByName = new ConcurrentHashMap<>();

    Map<String, TaskCounts> countsByName() {
        return countsByName;
    }

    long bytesFetched() {
        return bytesFetched.sum();
    }

    @Override
    public String toString() {
        return "node " + id;
    }
}
