package dev.croupier.futures.internal;

import dev.croupier.futures.ClusterStats;
import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.StoreClosedException;
import dev.croupier.objectstore.StoreMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node protocol inside one JVM: every node is a {@link NodeRuntime} with its own worker
 * threads and shared-memory store, a dispatch is a queue insert, an outcome a method call, and
 * an argument another node holds is read in place in that node's store, pinned while the
 * attempt runs ({@link NodeSession.Peers#inProcess}); a node killed under such a reader makes
 * the reader's attempt one whose argument was lost, as a failed pull would.
 *
 * <p>In serializing mode every attempt and outcome is encoded to its protobuf wire form and
 * parsed back ({@link WireCodec#roundTrip}), functions and plain arguments are Java-serialized
 * at submission and read back through the allow-list, and a driver's read and another node's
 * argument get a copy, as from a node process: a task that captures something that cannot
 * travel fails here, in a unit test, and not first on a cluster. Thread-safe.
 */
final class EmbeddedBackend implements Backend {

    /** Longest {@link #close} waits for interrupted tasks to return. */
    static final long CLOSE_WAIT_MILLIS = 30_000;

    /** One incarnation: the owner's link, the runtime, and the owner's session on it. */
    private record Incarnation(NodeLink link, NodeRuntime runtime, NodeSession session) {}

    private final ClusterConfig config;
    private final ValueCodecs codecs;
    private final boolean serializing;
    private final long clusterTag;
    private final AtomicInteger incarnations = new AtomicInteger();
    private final dev.croupier.objectstore.TemporaryClaim spillRoot;
    /** Current incarnation by node id. */
    private final CopyOnWriteArrayList<Incarnation> byId = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<NodeLink, Incarnation> byLink = new ConcurrentHashMap<>();
    private volatile Events events;

    EmbeddedBackend(ClusterConfig config, ValueCodecs codecs, long clusterTag) {
        this.config = config;
        this.codecs = codecs;
        this.serializing = config.serializing();
        this.clusterTag = clusterTag;
        this.spillRoot = NodeStore.claimSpillFolder(config.spillDirectory(), "croupier-cluster-");
    }

    @Override
    public List<NodeLink> start(Events events) {
        this.events = events;
        List<NodeLink> links = new ArrayList<>(config.nodes());
        for (int i = 0; i < config.nodes(); i++) {
            links.add(startNode(i));
        }
        return links;
    }

    @Override
    public boolean encodes() {
        return serializing;
    }

    @Override
    public NodeLink startNode(int id) {
        String name = "node-" + id + "." + incarnations.incrementAndGet();
        Path spill = spillRoot.path().resolve(name);
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
        // Only this JVM reads the nodes' stores, so they need no file unless a folder was asked for.
        if (config.memoryDirectory() != null) {
            store.memoryDirectory(config.memoryDirectory());
        } else {
            store.sharedMemory(false);
        }
        NodeRuntime runtime = new NodeRuntime(id, config.cpusOf(id),
                NodeStore.open(store, config.smallObjectBytes()));
        NodeLink link = new NodeLink(id, config.cpusOf(id), name);
        NodeSession session = new NodeSession(clusterTag, id, serializing ? config.smallObjectBytes() : 0, codecs, (node, call, outcome) -> events.outcome(link,
                serializing ? WireCodec.roundTrip(outcome, codecs) : outcome), peers);
        Incarnation incarnation = new Incarnation(link, runtime, session);
        synchronized (byId) {
            if (id < byId.size()) {
                byId.set(id, incarnation);
            } else {
                byId.add(incarnation);
            }
        }
        byLink.put(link, incarnation);
        return link;
    }

    /**
     * How the nodes of this JVM read each other's objects: in place, pinned in the holder's
     * store, so a reducer on one node reads the map outputs of the others without copying them;
     * in the serializing mode, as node processes do, by a copy into the reader's store.
     */
    private final NodeSession.Peers peers = new NodeSession.Peers() {
        @Override
        public long pull(ObjectId id, int source, NodeStore into) throws InterruptedException {
            return EmbeddedBackend.this.pull(id, source, into);
        }

        @Override
        public NodeRuntime inProcess(int source) {
            return serializing || source < 0 || source >= byId.size() ? null : byId.get(source).runtime();
        }
    };

    /** A pull between two stores of this JVM: one copy, from a pinned view into the target store. */
    private long pull(ObjectId id, int source, NodeStore into) throws InterruptedException {
        if (source < 0 || source >= byId.size()) {
            return -1;
        }
        NodeRuntime from = byId.get(source).runtime();
        try (NodeStore.Reading reading = from.store().open(id)) {
            if (reading == null) {
                return -1;
            }
            into.putFrame(id, reading.frame());
            return reading.frame().byteSize();
        } catch (IllegalStateException | StoreClosedException closedUnderUs) {
            if (!from.alive()) {
                return -1;
            }
            throw closedUnderUs;
        }
    }

    private Incarnation of(NodeLink link) {
        return byLink.get(link);
    }

    @Override
    public void kill(NodeLink node) {
        Incarnation inc = byLink.remove(node);
        if (inc != null) {
            inc.runtime().kill();
        }
    }

    @Override
    public void dispatch(NodeLink node, AttemptCall call) {
        Incarnation inc = of(node);
        if (inc != null) {
            // false when the node died meanwhile: its death resubmits what the link held
            inc.runtime().submit(inc.session(), serializing ? WireCodec.roundTrip(call) : call);
        }
    }

    @Override
    public void cancel(NodeLink node, long attemptId) {
        Incarnation inc = of(node);
        if (inc != null) {
            inc.runtime().cancel(inc.session(), attemptId);
        }
    }

    @Override
    public void free(NodeLink node, ObjectId id) {
        Incarnation inc = of(node);
        if (inc == null) {
            return;
        }
        try {
            inc.runtime().store().delete(id);
        } catch (IllegalStateException | StoreClosedException closedUnderUs) {
            // the node died; its copies died with it
        }
    }

    @Override
    public NodeStore.Reading read(NodeLink node, ObjectId id) throws InterruptedException {
        Incarnation inc = of(node);
        if (inc == null) {
            throw new IllegalStateException(node + " is dead");
        }
        NodeStore.Reading reading = inc.runtime().store().open(id);
        if (reading == null || !serializing) {
            return reading;
        }
        try (reading) {
            return NodeStore.Reading.of(MemorySegment.ofArray(reading.frame().toArray(ValueLayout.JAVA_BYTE)));
        }
    }

    @Override
    public long put(NodeLink node, ObjectId id, ValueCodecs.Encoded value) throws InterruptedException {
        Incarnation inc = of(node);
        if (inc == null) {
            throw new IllegalStateException(node + " is dead");
        }
        return inc.runtime().store().put(id, value);
    }

    @Override
    public ClusterStats.NodeStats stats(NodeLink node) {
        Incarnation inc = of(node);
        long objects = 0;
        StoreMetrics m = null;
        long tasksRun = 0;
        long fetched = 0;
        if (inc != null) {
            tasksRun = inc.runtime().tasksRun();
            fetched = inc.runtime().bytesFetched();
            try {
                objects = inc.runtime().store().objectCount();
                m = inc.runtime().store().metrics();
            } catch (IllegalStateException | StoreClosedException closedUnderUs) {
                m = null;
            }
        } else {
            Incarnation current = node.id < byId.size() ? byId.get(node.id) : null;
            if (current != null && current.link() == node) {
                tasksRun = current.runtime().tasksRun();
            }
        }
        return new ClusterStats.NodeStats(node.id, node.alive(), tasksRun, objects,
                m == null ? 0 : m.bytesInMemory(), m == null ? 0 : m.bytesSpilled(),
                m == null ? 0 : m.bytesRestored(), fetched, node.waiting());
    }

    @Override
    public long objectStoreBytes() {
        return config.objectStoreBytes();
    }

    @Override
    public void close() {
        killAll();
        // Tasks were interrupted; wait for them to return so that nothing a task does (a file it
        // writes, memory it touches) happens after close, where the caller cleans up after a
        // failed job. Bounded: a task that ignores interrupts must not hang close.
        long deadline = System.nanoTime() + CLOSE_WAIT_MILLIS * 1_000_000L;
        for (Incarnation inc : byId) {
            inc.runtime().awaitStopped(Math.max(0, (deadline - System.nanoTime()) / 1_000_000L));
        }
        byLink.clear();
        spillRoot.close();
    }

    /**
     * Kills every node at once, one thread each: most of a kill is its store giving its memory
     * back to the kernel (unmapping and deleting a region file of populated pages, tens of
     * milliseconds per few hundred MiB), which nodes' stores can do side by side. Rethrows
     * the first failure once every node is done.
     */
    private void killAll() {
        List<Future<?>> kills = new ArrayList<>(byId.size());
        try (ExecutorService killers = Executors.newThreadPerTaskExecutor(
                Thread.ofPlatform().name("croupier-kill-", 0).factory())) {
            for (Incarnation inc : byId) {
                kills.add(killers.submit(inc.runtime()::kill));
            }
        } // waits for every kill
        for (Future<?> kill : kills) {
            if (kill.state() == Future.State.FAILED) {
                Throwable failure = kill.exceptionNow(); // a kill throws nothing checked
                if (failure instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) failure;
            }
        }
    }

    /** A new random session tag. */
    static long newTag() {
        return ThreadLocalRandom.current().nextLong();
    }
}
