package dev.croupier.futures;

import dev.croupier.futures.internal.ClusterConfig;
import dev.croupier.futures.internal.OwnerCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A cluster of nodes that run tasks and keep their objects: the whole user API of the
 * distributed-futures runtime.
 *
 * <p>{@code task(...)...remote()} submits a task and returns an {@link ObjectRef} at once;
 * refs given as arguments are dependencies. {@link #put}, {@link #get}, {@link #wait} and
 * {@link #cancel} work on refs. A node's objects die with it ({@link #killNode}); a later
 * {@code get} rebuilds them by running again the tasks that made them.
 *
 * <p>Thread-safe: any thread, including a running task, may submit and get.
 */
public interface Cluster extends AutoCloseable {

    /**
     * A builder of a cluster: an embedded one (N logical nodes in this JVM) unless
     * {@link Builder#processes} or {@link Builder#connect} says otherwise.
     */
    static Builder builder() {
        return new Builder();
    }

    /**
     * Connects to running node processes ({@code bin/croupier node}); each address is
     * {@code host:port}, and a host name that resolves to several addresses is that many nodes.
     * Same as {@code builder().connect(addresses).start()}.
     */
    static Cluster connect(String... addresses) {
        return builder().connect(addresses).start();
    }

    <R> TaskBuilder<R> task(Fn0<R> fn);

    <A, R> TaskBuilder<R> task(Fn1<A, R> fn, Object a1);

    <A, B, R> TaskBuilder<R> task(Fn2<A, B, R> fn, Object a1, Object a2);

    <A, B, C, R> TaskBuilder<R> task(Fn3<A, B, C, R> fn, Object a1, Object a2, Object a3);

    <A, B, C, D, R> TaskBuilder<R> task(Fn4<A, B, C, D, R> fn, Object a1, Object a2, Object a3, Object a4);

    <A, B, C, D, E, R> TaskBuilder<R> task(
            Fn5<A, B, C, D, E, R> fn, Object a1, Object a2, Object a3, Object a4, Object a5);

    <A, B, C, D, E, F, R> TaskBuilder<R> task(
            Fn6<A, B, C, D, E, F, R> fn, Object a1, Object a2, Object a3, Object a4, Object a5, Object a6);

    /** Stores {@code value} on a node and returns its ref. Such an object cannot be rebuilt if lost. */
    <T> ObjectRef<T> put(T value);

    /** Same as {@code ref.get()}. */
    default <T> T get(ObjectRef<T> ref) {
        return ref.get();
    }

    /** The values of {@code refs}, in order; throws the first failure met. */
    default <T> List<T> get(List<? extends ObjectRef<T>> refs) {
        List<T> values = new ArrayList<>(refs.size());
        for (ObjectRef<T> ref : refs) {
            values.add(ref.get());
        }
        return values;
    }

    /**
     * Waits until {@code numReady} of {@code refs} are done or {@code timeout} passes. The
     * result lists at most {@code numReady} done refs in completion order, and the rest. The
     * outputs of one task complete together, so among themselves they keep the order given.
     */
    <T> WaitResult<T> wait(List<? extends ObjectRef<T>> refs, int numReady, Duration timeout);

    /**
     * Cancels the task that makes {@code ref}: a queued task never runs, a running one is
     * interrupted, and its values and those of every task depending on them fail with
     * {@link TaskCancelledException}. Returns false if the task had already finished (or the
     * object was made by {@code put}), in which case nothing changes.
     */
    boolean cancel(ObjectRef<?> ref);

    /** Kills a node as a crash would: its objects and running tasks are lost. */
    void killNode(int nodeId);

    /** Brings a killed node back, empty. */
    void restartNode(int nodeId);

    /** Adds a node and returns its id. */
    int addNode();

    /** Ids of the live nodes, ascending. */
    List<Integer> aliveNodes();

    /** Capacity in bytes of each node's object store (memory, before spilling). */
    long objectStoreBytes();

    /** The port of this driver's /metrics ({@link Builder#metricsPort}), or -1 if it serves none. */
    int metricsPort();

    /** Number of objects whose values are held on some node (0 once every ref is released and no task is pending). */
    long objectCount();

    /** Per-task-name and per-node statistics; its {@code toString()} is a readable table. */
    ClusterStats stats();

    /** Stops every node and frees every object; pending gets fail with {@link ErrorCode#CLOSED}. */
    @Override
    void close();

    /**
     * Settings of an embedded cluster, checked by {@link #start()}. Not thread-safe.
     */
    final class Builder {
        /** Default number of nodes. */
        public static final int DEFAULT_NODES = 4;
        /** Default time after which a silent node process is dead to the driver: 2 s. */
        public static final Duration DEFAULT_HEARTBEAT_TIMEOUT = Duration.ofSeconds(2);
        /** Default time between two resolutions of the names given to {@link #connect}: 1 s. */
        public static final Duration DEFAULT_RESOLVE_EVERY = Duration.ofSeconds(1);
        /** Default bound under which a value lives in its node's heap instead of the object store: 64 KiB. */
        public static final int DEFAULT_SMALL_OBJECT_BYTES = 64 << 10;

        private int nodes = DEFAULT_NODES;
        private int cpusPerNode = 0;
        /** 0: sized from the machine ({@link DefaultStoreSize}). */
        private long objectStoreBytes;
        private int smallObjectBytes = DEFAULT_SMALL_OBJECT_BYTES;
        private Path memoryDirectory;
        private Path spillDirectory;
        private final List<String> serializableAllowList = new ArrayList<>();
        private final Map<Class<?>, Codec<?>> codecs = new LinkedHashMap<>();
        private boolean serializing = Boolean.getBoolean(SERIALIZING_PROPERTY);
        private final List<String> addresses = new ArrayList<>();
        private int processes;
        private Duration heartbeatTimeout = DEFAULT_HEARTBEAT_TIMEOUT;
        private Duration resolveEvery = DEFAULT_RESOLVE_EVERY;
        private int metricsPort = -1;
        private Path tokenFile;
        private Path tlsAuthority;

        private Builder() {}

        /**
         * System property that turns {@link #serializing(boolean)} on by default ({@code true});
         * the project's test suite sets it, so every job test runs as a process cluster would.
         */
        public static final String SERIALIZING_PROPERTY = "croupier.serializing";

        /**
         * Encodes every task function, argument, result and outcome exactly as the process
         * cluster's wire does, and gives {@code get} a copy, as from a node process: a task that
         * captures something that cannot travel fails here rather than on a cluster. Slower;
         * meant for tests. Default: the system property {@value #SERIALIZING_PROPERTY}, else off.
         */
        public Builder serializing(boolean on) {
            this.serializing = on;
            return this;
        }

        /** Number of nodes at start, 1 to 1024 (default {@value #DEFAULT_NODES}). */
        public Builder nodes(int nodes) {
            this.nodes = nodes;
            return this;
        }

        /**
         * CPU slots of each node: how many tasks of one CPU it runs at once. Default: the
         * machine's processors shared among the nodes, at least 1 each; where they do not divide
         * evenly the first nodes have one more (6 processors over 4 nodes: 2, 2, 1, 1).
         */
        public Builder cpusPerNode(int cpus) {
            this.cpusPerNode = cpus;
            return this;
        }

        /**
         * Hard capacity of each node's object store in bytes. Default: from the machine,
         * {@link DefaultStoreSize#PERCENT}% of its available memory divided among the nodes it
         * runs ({@link DefaultStoreSize}); a store costs only what it holds.
         */
        public Builder objectStoreBytes(long bytes) {
            this.objectStoreBytes = bytes;
            return this;
        }

        /** Values encoded smaller than this stay on the node's heap (default 64 KiB); 0 sends every value to the store. */
        public Builder smallObjectBytes(int bytes) {
            this.smallObjectBytes = bytes;
            return this;
        }

        /**
         * Folder of the stores' shared-memory files (default /dev/shm where it exists). Node
         * processes keep their stores there, so that the others on the host read them in place;
         * without this folder, a node whose store /dev/shm has no room for keeps it in its own
         * memory, and the others copy it. Embedded nodes, read only by this JVM, keep theirs in
         * its own memory unless a folder is given here.
         */
        public Builder memoryDirectory(Path dir) {
            this.memoryDirectory = Objects.requireNonNull(dir, "memoryDirectory");
            return this;
        }

        /** Folder the stores spill to (default the JVM's temporary folder). */
        public Builder spillDirectory(Path dir) {
            this.spillDirectory = Objects.requireNonNull(dir, "spillDirectory");
            return this;
        }

        /**
         * Lets values of classes matching these {@link java.io.ObjectInputFilter} patterns
         * (for example {@code com.example.**}) travel by Java serialization. JDK value and
         * collection classes are allowed already; every other class is refused.
         */
        public Builder allowSerializable(String... patterns) {
            for (String p : patterns) {
                serializableAllowList.add(Objects.requireNonNull(p, "pattern"));
            }
            return this;
        }

        /** Stores values of exactly {@code type} with {@code codec}. */
        public <T> Builder codec(Class<T> type, Codec<T> codec) {
            codecs.put(Objects.requireNonNull(type, "type"), Objects.requireNonNull(codec, "codec"));
            return this;
        }

        /**
         * Runs {@code n} nodes as separate processes on this machine (instead of
         * {@link #nodes} in this JVM), started by {@link #start()} with this JVM's class path
         * and flags and stopped by {@link Cluster#close()}; {@link #cpusPerNode} and the store
         * settings apply to each. 0 (the default) runs the nodes in this JVM.
         */
        public Builder processes(int n) {
            this.processes = n;
            return this;
        }

        /**
         * Uses running node processes instead of starting nodes: {@code host:port} each, a name
         * that resolves to several addresses being that many nodes. The names are resolved again
         * every {@link #resolveEvery}, so nodes may join, come back and leave while the driver
         * runs. Store and CPU settings are the nodes' own.
         */
        public Builder connect(String... addresses) {
            for (String a : addresses) {
                this.addresses.add(Objects.requireNonNull(a, "address"));
            }
            return this;
        }

        /**
         * How long a node process may stay silent before the driver counts it dead, retries its
         * tasks elsewhere and rebuilds its objects when needed (default 2 s). Heartbeats go
         * out four times per timeout. Ignored by the embedded cluster.
         */
        public Builder heartbeatTimeout(Duration timeout) {
            this.heartbeatTimeout = Objects.requireNonNull(timeout, "heartbeatTimeout");
            return this;
        }

        /**
         * How often a driver that {@link #connect}s resolves its names again (default 1 s,
         * 100 ms to 10 min). An address that a name comes to resolve to, or a node that answers
         * again at an address whose node was lost (a node restarted on the same port), joins as
         * a new node incarnation and takes new tasks; a node whose address no name resolves to
         * any more is treated as lost: its tasks are retried elsewhere and its objects rebuilt
         * when needed. Ignored by other clusters.
         */
        public Builder resolveEvery(Duration every) {
            this.resolveEvery = Objects.requireNonNull(every, "resolveEvery");
            return this;
        }

        /**
         * Serves this driver's Prometheus text at {@code http://127.0.0.1:PORT/metrics} (0: any
         * free port, {@link Cluster#metricsPort()}) while the cluster is open: tasks by name,
         * retries and rebuilt objects, and each node's store, spills and fetches as the owner
         * knows them (docs/cluster.md, "Operating"). Default: none.
         */
        public Builder metricsPort(int port) {
            this.metricsPort = port;
            return this;
        }

        /**
         * A file holding the token every call to node processes carries (default: the
         * environment variable {@code CROUPIER_TOKEN}); nodes this cluster starts are given the
         * same. Ignored by the embedded cluster.
         */
        public Builder tokenFile(Path file) {
            this.tokenFile = Objects.requireNonNull(file, "tokenFile");
            return this;
        }

        /**
         * Speaks TLS to node processes, trusting the certificate authority in this PEM file
         * (default: the file the environment variable {@code CROUPIER_TLS_CA} names; with
         * neither, plaintext). For {@link #connect} only: nodes this driver starts serve plaintext
         * on loopback.
         */
        public Builder tlsAuthority(Path caFile) {
            this.tlsAuthority = Objects.requireNonNull(caFile, "tlsAuthority");
            return this;
        }

        /** Checks every setting and starts (or connects to) the nodes. */
        public Cluster start() {
            return OwnerCluster.start(conclude());
        }

        ClusterConfig conclude() {
            check(nodes >= 1 && nodes <= 1024, "nodes", nodes, "1..1024");
            check(processes >= 0 && processes <= 1024, "processes", processes, "0..1024");
            check(metricsPort >= -1 && metricsPort <= 65535, "metricsPort", metricsPort, "0..65535");
            if (processes > 0 && !addresses.isEmpty()) {
                throw new CroupierException(ErrorCode.BAD_INPUT,
                        "Cluster.Builder: processes(" + processes + ") and connect(...) exclude each other");
            }
            check(heartbeatTimeout.compareTo(Duration.ofMillis(200)) >= 0
                    && heartbeatTimeout.compareTo(Duration.ofMinutes(10)) <= 0,
                    "heartbeatTimeout", heartbeatTimeout, "200 ms..10 min");
            check(resolveEvery.compareTo(Duration.ofMillis(100)) >= 0
                    && resolveEvery.compareTo(Duration.ofMinutes(10)) <= 0,
                    "resolveEvery", resolveEvery, "100 ms..10 min");
            int perMachine = processes > 0 ? processes : nodes;
            int[] shared = cpusPerNode == 0
                    ? ClusterConfig.shareProcessors(Runtime.getRuntime().availableProcessors(), perMachine)
                    : new int[] {cpusPerNode, 0};
            check(shared[0] >= 1 && shared[0] <= 4096, "cpusPerNode", cpusPerNode, "1..4096");
            long storeBytes = objectStoreBytes == 0 && addresses.isEmpty()
                    ? DefaultStoreSize.forNodes(perMachine).bytesPerNode() : objectStoreBytes;
            check(storeBytes >= 1 << 20 || !addresses.isEmpty(), "objectStoreBytes", objectStoreBytes, ">= 1 MiB");
            check(smallObjectBytes >= 0 && smallObjectBytes <= 16 << 20,
                    "smallObjectBytes", smallObjectBytes, "0..16 MiB");
            return new ClusterConfig(nodes, shared[0], shared[1], storeBytes, smallObjectBytes,
                    memoryDirectory, spillDirectory, List.copyOf(serializableAllowList),
                    java.util.Collections.unmodifiableMap(new LinkedHashMap<>(codecs)), serializing,
                    dev.croupier.futures.internal.NodeAddresses.names(addresses), processes, heartbeatTimeout, tokenFile,
                    tlsAuthority, resolveEvery, dev.croupier.futures.internal.NodeAddresses::resolve, metricsPort);
        }

        private static void check(boolean ok, String knob, Object value, String range) {
            if (!ok) {
                throw new CroupierException(ErrorCode.BAD_INPUT,
                        "Cluster.Builder." + knob + " = " + value + " is out of range; allowed: " + range);
            }
        }
    }
}
