package dev.croupier.futures.internal;

import com.google.protobuf.ByteString;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.wire.Chunk;
import dev.croupier.futures.wire.CodePart;
import dev.croupier.futures.wire.CodeReply;
import dev.croupier.futures.wire.CodeWanted;
import dev.croupier.futures.wire.ControlGrpc;
import dev.croupier.futures.wire.DataGrpc;
import dev.croupier.futures.wire.Draining;
import dev.croupier.futures.wire.DriverMessage;
import dev.croupier.futures.wire.Lent;
import dev.croupier.futures.wire.Load;
import dev.croupier.futures.wire.Location;
import dev.croupier.futures.wire.NodeMessage;
import dev.croupier.futures.wire.ObjectKey;
import dev.croupier.futures.wire.Outcome;
import dev.croupier.futures.wire.OutcomeBatch;
import dev.croupier.futures.wire.PullRequest;
import dev.croupier.futures.wire.PutReply;
import dev.croupier.futures.wire.RegisterReply;
import dev.croupier.futures.wire.RegisterRequest;
import dev.croupier.futures.wire.StatsReply;
import dev.croupier.futures.wire.StatsRequest;
import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.StoreClosedException;
import dev.croupier.objectstore.StoreMetrics;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A node process's services: one {@link NodeRuntime} (CPU slots, queue, store) served over gRPC
 * to any number of driver sessions ({@code control.proto}, {@code data.proto}).
 *
 * <p>Design. A driver registers a session (version check, its allow-list and codecs), then
 * holds one bidirectional stream: attempts, cancels, frees and heartbeats come down in
 * batches, outcomes go up in batches (whatever finished while the last batch was being sent
 * goes in the next, so tiny tasks cost a fraction of a message each). The node pulls an
 * argument from a peer with the data service's {@code Pull}, which streams the holder's frame in
 * chunks under gRPC flow control: the next chunk is sent only when the transport is ready for
 * it. When a session's stream ends, its objects are kept for the lease, then freed, so a driver
 * that died leaves nothing behind while another driver's session carries on; a session whose
 * driver says nothing for the whole lease on a stream that stays open is ended and freed the
 * same way. Thread-safe.
 */
public final class NodeService implements AutoCloseable {

    /** Protocol version; a driver and a node must speak the same. */
    static final int PROTOCOL_VERSION = 1;
    /**
     * Bytes of payload per data chunk. Ray's object manager moves 5 MiB chunks; here 1 MiB
     * chunks streamed 64 MiB objects a third faster than 4 MiB ones, and 8 MiB ones slower
     * still (docs/benchmarks.md): the puller takes one chunk at a time, so smaller chunks keep
     * both ends busier.
     */
    static final int CHUNK_BYTES = 1 << 20;
    /**
     * HTTP/2 flow-control window of every stream: four chunks in flight, so the sender never
     * waits a round trip for credit between chunks (grpc-java's default is 1 MiB).
     */
    static final int FLOW_CONTROL_WINDOW = 4 * CHUNK_BYTES;
    /** A pull's payload passes to gRPC's buffers this much at a time: it stays in the core's cache. */
    private static final int SCRATCH_BYTES = 64 << 10;
    /** Largest inbound message: a chunk, or a batch of attempts whose plain arguments are values. */
    static final int MAX_INBOUND_BYTES = 64 << 20;

    /** Set once the store is open, before {@link #ready}: calls are refused until then. */
    private NodeRuntime runtime;
    private final dev.croupier.objectstore.TemporaryClaim spillRoot;
    private final Server server;
    private final String address;
    private PeerChannels peers;
    private final ScheduledExecutorService leases = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "croupier-node-leases");
        t.setDaemon(true);
        return t;
    });
    private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
    /** Sends every session's outcomes, so workers only queue them and go on to the next task. */
    private final java.util.concurrent.ExecutorService sender = Executors.newSingleThreadExecutor(
            r -> Thread.ofPlatform().daemon().name("croupier-node-sender").unstarted(r));
    private final int smallObjectBytes;
    private final long storeBytes;
    /** Under the server and the channels to other nodes; ended last by {@link #close}. */
    private final EventLoops loops = new EventLoops("croupier-node-io");

    /**
     * Opens the store and starts serving.
     *
     * @param bind the address to bind (127.0.0.1 unless told otherwise)
     * @param port 0 for any free port
     */
    public NodeService(String bind, int port, int cpus, long storeBytes, int smallObjectBytes, Path memoryDirectory,
                       Path spillDirectory, Path tokenFile, Path tlsCertificate, Path tlsKey, Path tlsAuthority)
            throws IOException {
        CallToken token = CallToken.of(tokenFile);
        TlsFiles peersTrust = TlsFiles.client(tlsAuthority);
        TlsFiles tls = new TlsFiles(tlsCertificate, tlsKey, peersTrust == null ? null : peersTrust.authority());
        if (token == null && !java.net.InetAddress.getByName(bind).isLoopbackAddress()) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "binding " + bind + ", which other hosts can"
                    + " reach, needs a token: give --token-file FILE or set " + CallToken.ENVIRONMENT);
        }
        this.smallObjectBytes = smallObjectBytes;
        this.storeBytes = storeBytes;
        this.spillRoot = NodeStore.claimSpillFolder(spillDirectory, "croupier-node-");
        // Nodes on this host read the store in place, through its file in the memory folder, and
        // copy its objects without a call (SameHost). Where /dev/shm has no room for it (a
        // container's is often 64 MiB) and no folder is given, a file would go to the temporary
        // folder, on disk: the store is this process's own memory instead, and they copy it.
        boolean shared = memoryDirectory != null || ObjectStore.sharedMemoryDirectoryHolds(storeBytes);
        ObjectStore.Builder store = ObjectStore.builder()
                .name("node-" + ProcessHandle.current().pid() + "-" + Long.toUnsignedString(EmbeddedBackend.newTag(), 36))
                .capacityBytes(storeBytes)
                .spillDirectory(spillRoot.path())
                .sharedMemory(shared)
                .directory(shared);
        if (memoryDirectory != null) {
            store.memoryDirectory(memoryDirectory);
        }
        // The port is served from the start, the health service at once (liveness SERVING,
        // readiness NOT_SERVING) and every other call refused until the store is open and the
        // node takes tasks: a probe tells a node that starts from one that cannot.
        health.setStatus(LIVENESS, HealthCheckResponse.ServingStatus.SERVING);
        health.setStatus(READINESS, HealthCheckResponse.ServingStatus.NOT_SERVING);
        ServerInterceptor starting = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                if (ready) {
                    return next.startCall(call, headers);
                }
                call.close(Status.UNAVAILABLE.withDescription("node " + address + " is starting"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
        };
        List<ServerInterceptor> guards = new ArrayList<>();
        guards.add(starting);
        if (token != null) {
            guards.add(token.server(this::address)); // health answers without it: a probe carries none
        }
        NettyServerBuilder builder = loops.serve(NettyServerBuilder.forAddress(new InetSocketAddress(bind, port)))
                .maxInboundMessageSize(MAX_INBOUND_BYTES)
                .flowControlWindow(FLOW_CONTROL_WINDOW)
                .addService(ServerInterceptors.intercept(new Control(), guards))
                .addService(ServerInterceptors.intercept(new Data().definition(), guards))
                .addService(health.getHealthService());
        if (tls != null && tls.serves()) {
            builder.sslContext(tls.server());
        }
        try {
            this.server = builder.build().start();
        } catch (IOException | RuntimeException e) {
            loops.close();
            throw e;
        }
        this.address = bind + ":" + server.getPort();
        try {
            StartupTap.storeOpening(address);
            this.runtime = new NodeRuntime(0, cpus, NodeStore.open(store, smallObjectBytes));
            this.peers = new PeerChannels(token, tls, loops);
        } catch (RuntimeException e) {
            server.shutdownNow();
            loops.close();
            spillRoot.close();
            throw e;
        }
        leases.scheduleWithFixedDelay(this::expireSilentSessions, SILENCE_CHECK_MILLIS, SILENCE_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
        ready = true;
        health.setStatus(READINESS, HealthCheckResponse.ServingStatus.SERVING);
    }

    /** What the node reports of itself: to {@code Control.Stats} callers and on its metrics endpoint. */
    public StatsReply stats() {
        StoreMetrics m = runtime.store().metrics();
        StatsReply.Builder b = StatsReply.newBuilder()
                .setAddress(address)
                .setCpus(runtime.cpus)
                .setStoreCapacity(storeBytes)
                .setStoreUsed(m.bytesInMemory())
                .setBytesSpilled(m.bytesSpilled())
                .setBytesRestored(m.bytesRestored())
                .setObjects(runtime.store().objectCount())
                .setTasksRunning(runtime.running())
                .setTasksQueued(runtime.queued())
                .setTasksRun(runtime.tasksRun())
                .setBytesFetched(runtime.bytesFetched());
        sessions.keySet().forEach(b::addSessions);
        runtime.countsByName().forEach((name, c) -> b.addTasks(dev.croupier.futures.wire.TaskCounts.newBuilder()
                .setName(name).setStarted(c.started().sum()).setFinished(c.finished().sum()).setFailed(c.failed().sum())));
        return b.build();
    }

    /** The health service's name for readiness: the whole server's, the one a probe asks by default. */
    public static final String READINESS = "";
    /** The health service's name for liveness: SERVING while the process serves at all. */
    public static final String LIVENESS = "liveness";
    private final HealthStatusManager health = new HealthStatusManager();
    /** The store is open and the node takes tasks; written once, before readiness says so. */
    private volatile boolean ready;
    private volatile boolean draining;

    /**
     * Stops taking work, as SIGTERM asks: readiness turns NOT_SERVING, new sessions are
     * refused, and every driver is told, so it places nothing more here; then waits until the
     * node runs and holds no attempt, or {@code bound} passes. Returns whether it ran dry.
     * What the node still holds is lost when it closes, and its drivers rebuild it.
     */
    public boolean drain(java.time.Duration bound) throws InterruptedException {
        draining = true;
        health.setStatus(READINESS, HealthCheckResponse.ServingStatus.NOT_SERVING);
        NodeMessage told = NodeMessage.newBuilder()
                .setDraining(Draining.newBuilder().setSeconds((int) Math.min(Integer.MAX_VALUE, bound.toSeconds())))
                .build();
        for (Session s : sessions.values()) {
            s.sender.send(told);
        }
        long deadline = System.nanoTime() + bound.toNanos();
        while (runtime.running() + runtime.queued() > 0) {
            if (System.nanoTime() >= deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** How often sessions are checked for a driver gone silent. */
    private static final long SILENCE_CHECK_MILLIS = 250;

    /**
     * Ends and expires every session whose driver said nothing for its whole lease while its
     * stream stayed open: a driver host that froze or lost the network leaves the TCP
     * connection standing without a word (a live driver sends heartbeats several times a
     * second), and its objects must not hold the store for ever. A driver that wakes up finds
     * its stream failed and counts this node dead.
     */
    private void expireSilentSessions() {
        long now = System.nanoTime();
        for (Session s : sessions.values()) {
            if (!s.ended && now - s.lastHeard > TimeUnit.MILLISECONDS.toNanos(s.leaseMillis)) {
                s.ended = true;
                s.sender.hangUp(Status.UNAVAILABLE.withDescription("node " + address + ": session "
                        + Long.toHexString(s.node.tag) + " said nothing for its lease (" + s.leaseMillis + " ms)"));
                s.expire();
            }
        }
    }

    /** {@code host:port} the node serves on. */
    public String address() {
        return address;
    }

    /** Blocks until the server stops. */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    // ---------------------------------------------------------------- sessions

    /** One driver's session and its stream back. */
    private final class Session {
        final NodeSession node;
        final long leaseMillis;
        /** Objects this node holds for the session: freed when its lease runs out. */
        final Map<ObjectId, Boolean> objects = new ConcurrentHashMap<>();
        final Map<Integer, String> peerAddresses = new ConcurrentHashMap<>();
        final OutcomeSender sender = new OutcomeSender();
        volatile boolean ended;
        /** When the driver last said anything (registered, or sent a message on its stream). */
        volatile long lastHeard = System.nanoTime();

        /** The code the driver shipped; the session's functions and values resolve their classes here. */
        final SessionClassLoader code;
        /** Digests of the class files the session's code classes have here, by class name. */
        final Map<String, byte[]> digests = new ConcurrentHashMap<>();
        /** Attempts whose code class is missing here, by class name, until the driver ships it. */
        private final Map<String, List<AttemptCall>> awaitingCode = new HashMap<>();
        /** Classes the driver shipped, or could not ship: why their attempts cannot run here. */
        private final Map<String, String> codeRefused = new ConcurrentHashMap<>();

        Session(RegisterRequest r) {
            this.code = new SessionClassLoader(r.getSession(), NodeService.class.getClassLoader());
            ValueCodecs codecs = new ValueCodecs(Map.of(), r.getSerializableAllowListList(), code);
            if (!r.getCodecs().isEmpty()) {
                @SuppressWarnings("unchecked")
                Map<Class<?>, dev.croupier.futures.Codec<?>> shipped = (Map<Class<?>, dev.croupier.futures.Codec<?>>)
                        codecs.decodeCode(MemorySegment.ofArray(r.getCodecs().toByteArray()));
                codecs = new ValueCodecs(shipped, r.getSerializableAllowListList(), code);
            }
            this.leaseMillis = r.getLeaseMillis();
            this.node = new NodeSession(r.getSession(), r.getNode(), r.getInlineBelow(), codecs, (n, call, outcome) -> report(call, outcome),
                    new NodeSession.Peers() {
                        @Override
                        public long pull(ObjectId id, int source, NodeStore into) throws InterruptedException {
                            return Session.this.pull(id, source, into);
                        }

                        @Override
                        public List<SameHost.Loan> borrow(List<ObjectId> ids, int source) {
                            String at = peerAddress(source);
                            return at == null ? null : peers.borrow(at, node.tag, ids);
                        }

                        @Override
                        public boolean mayLend(int source) {
                            String at = peerAddress(source);
                            return at != null && peers.mayLend(at);
                        }
                    });
        }

        private void report(AttemptCall call, AttemptOutcome outcome) {
            if (outcome.kind() == AttemptOutcome.Kind.COMPLETED) {
                for (int i = 0; i < call.outputs().length; i++) {
                    if (i >= outcome.values().length || outcome.values()[i] == null) {
                        objects.put(call.outputs()[i], Boolean.TRUE);
                    }
                }
                if (ended && sessions.get(node.tag) != this) {
                    expire(); // the lease ran out while this attempt ran
                }
            }
            sender.add(WireCodec.toWire(outcome, node.codecs));
        }

        /** The address of the session's node {@code source}, or null if the driver has not said it. */
        private String peerAddress(int source) {
            String at = peerAddresses.get(source);
            return at == null || at.isEmpty() ? null : at;
        }

        private long pull(ObjectId id, int source, NodeStore into) throws InterruptedException {
            String at = peerAddress(source);
            if (at == null) {
                return -1;
            }
            long bytes = peers.pull(at, node.tag, id, into);
            if (bytes >= 0) {
                objects.put(id, Boolean.TRUE);
            }
            return bytes;
        }

        /**
         * Queues an attempt, or answers at once that it cannot run here and why. An attempt whose
         * code class this node lacks waits while the driver is asked for it, once per class.
         */
        void submit(AttemptCall call) {
            try {
                if (call.code() != null && !call.code().presentIn(address, code, digests)) {
                    String name = call.code().className();
                    String refused = codeRefused.get(name);
                    if (refused != null) {
                        throw new CroupierException(ErrorCode.BAD_INPUT, refused);
                    }
                    boolean ask;
                    synchronized (awaitingCode) {
                        List<AttemptCall> waiting = awaitingCode.computeIfAbsent(name, n -> new ArrayList<>());
                        ask = waiting.isEmpty();
                        waiting.add(call);
                    }
                    if (ask) {
                        sender.send(NodeMessage.newBuilder().setCodeWanted(CodeWanted.newBuilder().setClassName(name))
                                .build());
                    }
                    return;
                }
            } catch (RuntimeException refused) {
                refuse(call.attemptId(), refused);
                return;
            }
            runtime.submit(node, call);
        }

        /** The driver answered a {@code CodeWanted}: the attempts that waited run, or fail saying why. */
        void codeArrived(String className, String refusal) {
            if (refusal != null) {
                codeRefused.put(className, "node " + address + " lacks class " + className
                        + " and the driver could not ship it: " + refusal);
            } else {
                codeRefused.put(className, "class " + className + " is neither on the class path of node " + address
                        + " nor in the jar the driver shipped for it");
            }
            List<AttemptCall> waiting;
            synchronized (awaitingCode) {
                waiting = awaitingCode.remove(className);
            }
            if (waiting != null) {
                waiting.forEach(this::submit);
            }
        }

        void refuse(long attemptId, RuntimeException why) {
            sender.add(WireCodec.toWire(new AttemptOutcome(attemptId, AttemptOutcome.Kind.FAILED,
                    AttemptOutcome.NO_SIZES, why, null, AttemptOutcome.NO_COPIES, 0, 0, 0, 0, 0,
                    AttemptOutcome.NO_VALUES), node.codecs));
        }

        /** Frees everything the session left: its lease ran out with no driver on the stream. */
        void expire() {
            sessions.remove(node.tag, this);
            synchronized (awaitingCode) {
                awaitingCode.clear();
            }
            for (Long attempt : List.copyOf(node.attempts.keySet())) {
                runtime.cancel(node, attempt);
            }
            for (ObjectId id : List.copyOf(objects.keySet())) {
                free(id);
            }
        }

        void free(ObjectId id) {
            objects.remove(id);
            try {
                runtime.store().delete(id);
            } catch (IllegalStateException | StoreClosedException closing) {
                // the node is stopping; its store goes with it
            }
        }
    }

    /**
     * Sends a session's outcomes in batches: one message carries whatever finished while the
     * previous one was being written. Thread-safe.
     */
    private final class OutcomeSender {
        private OutcomeBatch.Builder pending = OutcomeBatch.newBuilder();
        private StreamObserver<NodeMessage> stream;
        private boolean sending;

        synchronized void attach(StreamObserver<NodeMessage> stream) {
            this.stream = stream;
        }

        /** Queues an outcome; the node's sender thread sends what has gathered as one message. */
        void add(Outcome outcome) {
            synchronized (this) {
                pending.addOutcomes(outcome);
                if (sending || stream == null) {
                    return;
                }
                sending = true;
            }
            sender.execute(this::drain);
        }

        void send(NodeMessage message) {
            synchronized (this) {
                if (stream != null) {
                    try {
                        stream.onNext(message);
                    } catch (RuntimeException streamGone) {
                        stream = null;
                    }
                }
            }
        }

        private void drain() {
            while (true) {
                synchronized (this) {
                    if (pending.getOutcomesCount() == 0 || stream == null) {
                        sending = false;
                        return;
                    }
                    OutcomeBatch batch = pending.build();
                    pending = OutcomeBatch.newBuilder();
                    try {
                        stream.onNext(NodeMessage.newBuilder().setOutcomes(batch).build());
                    } catch (RuntimeException streamGone) {
                        stream = null;
                    }
                }
            }
        }

        synchronized void detach() {
            stream = null;
        }

        /** Ends the stream from this side with {@code why}; the driver sees it fail. */
        synchronized void hangUp(Status why) {
            if (stream != null) {
                try {
                    stream.onError(why.asRuntimeException());
                } catch (RuntimeException alreadyGone) {
                    // nothing to end
                }
                stream = null;
            }
        }
    }

    private final class Control extends ControlGrpc.ControlImplBase {

        @Override
        public void register(RegisterRequest request, StreamObserver<RegisterReply> reply) {
            if (draining) {
                reply.onError(Status.UNAVAILABLE.withDescription("node " + address + " is stopping").asRuntimeException());
                return;
            }
            String version = CroupierVersion.get();
            if (request.getProtocolVersion() != PROTOCOL_VERSION || !request.getCroupierVersion().equals(version)) {
                reply.onError(Status.FAILED_PRECONDITION.withDescription("node " + address + " runs Croupier "
                        + version + " (protocol " + PROTOCOL_VERSION + "); the driver runs Croupier "
                        + request.getCroupierVersion() + " (protocol " + request.getProtocolVersion() + ")")
                        .asRuntimeException());
                return;
            }
            Session session;
            try {
                session = new Session(request);
            } catch (RuntimeException bad) {
                reply.onError(Status.INVALID_ARGUMENT.withDescription("node " + address + " cannot open the session: "
                        + bad.getMessage()).asRuntimeException());
                return;
            }
            Session old = sessions.put(request.getSession(), session);
            if (old != null) {
                old.expire();
            }
            reply.onNext(RegisterReply.newBuilder()
                    .setProtocolVersion(PROTOCOL_VERSION)
                    .setCroupierVersion(version)
                    .setCpus(runtime.cpus)
                    .setStoreBytes(storeBytes)
                    .setSmallObjectBytes(smallObjectBytes)
                    .build());
            reply.onCompleted();
        }

        @Override
        public StreamObserver<CodePart> shipCode(StreamObserver<CodeReply> reply) {
            return new StreamObserver<>() {
                private Session session;
                private String className;
                private String refusal;
                private byte[] jar;
                private int filled;
                private boolean failed;

                @Override
                public void onNext(CodePart part) {
                    if (failed) {
                        return;
                    }
                    if (session == null) {
                        session = sessions.get(part.getSession());
                        className = part.getClassName();
                        if (session == null) {
                            fail(Status.FAILED_PRECONDITION.withDescription("session "
                                    + Long.toHexString(part.getSession()) + " is not registered on node " + address));
                            return;
                        }
                        if (!part.getRefusal().isEmpty()) {
                            refusal = part.getRefusal();
                            return;
                        }
                        if (part.getTotal() > SessionClassLoader.MAX_JAR_BYTES) {
                            fail(Status.RESOURCE_EXHAUSTED.withDescription("node " + address + " takes jars of at most "
                                    + (SessionClassLoader.MAX_JAR_BYTES >> 20) + " MiB; the one for " + className
                                    + " has " + part.getTotal() + " bytes"));
                            return;
                        }
                        jar = new byte[(int) part.getTotal()];
                    }
                    ByteString data = part.getData();
                    if (jar == null || filled + data.size() > jar.length) {
                        fail(Status.INVALID_ARGUMENT.withDescription("the jar for " + className
                                + " sent more than its announced size"));
                        return;
                    }
                    data.copyTo(jar, filled);
                    filled += data.size();
                }

                private void fail(Status status) {
                    failed = true;
                    if (session != null) {
                        session.codeArrived(className, status.getDescription()); // its attempts must not wait forever
                    }
                    reply.onError(status.asRuntimeException());
                }

                @Override
                public void onError(Throwable t) {
                    jar = null;
                }

                @Override
                public void onCompleted() {
                    if (failed || session == null) {
                        return;
                    }
                    if (refusal == null && (jar == null || filled != jar.length)) {
                        fail(Status.INVALID_ARGUMENT.withDescription("the jar for " + className + " ended after "
                                + filled + " bytes"));
                        return;
                    }
                    int classes = 0;
                    if (refusal == null) {
                        try {
                            classes = session.code.add(jar);
                        } catch (IOException bad) {
                            refusal = "the jar it sent is unusable: " + bad.getMessage();
                        }
                    }
                    session.codeArrived(className, refusal);
                    reply.onNext(CodeReply.newBuilder().setClasses(classes).build());
                    reply.onCompleted();
                }
            };
        }

        @Override
        public StreamObserver<DriverMessage> session(StreamObserver<NodeMessage> out) {
            return new StreamObserver<>() {
                private Session session;

                @Override
                public void onNext(DriverMessage m) {
                    if (session == null) {
                        session = sessions.get(m.getSession());
                        if (session == null) {
                            out.onError(Status.FAILED_PRECONDITION.withDescription("session "
                                    + Long.toHexString(m.getSession()) + " is not registered on node " + address)
                                    .asRuntimeException());
                            return;
                        }
                        session.sender.attach(out);
                    }
                    session.lastHeard = System.nanoTime();
                    switch (m.getKindCase()) {
                        case DISPATCH -> m.getDispatch().getAttemptsList().forEach(this::submit);
                        case CANCEL -> m.getCancel().getAttemptIdsList().forEach(id -> runtime.cancel(session.node, id));
                        case FREE -> m.getFree().getIdsList().forEach(key -> session.free(WireCodec.id(key)));
                        case PEERS -> {
                            for (Location l : m.getPeers().getNodesList()) {
                                session.peerAddresses.put(l.getNode(), l.getAddress());
                            }
                        }
                        case HEARTBEAT -> session.sender.send(NodeMessage.newBuilder().setHeartbeat(Load.newBuilder()
                                .setQueued(runtime.queued()).setRunning(runtime.running())).build());
                        case KIND_NOT_SET -> { }
                    }
                }

                private void submit(dev.croupier.futures.wire.Attempt a) {
                    AttemptCall call;
                    try {
                        call = WireCodec.fromWire(a);
                    } catch (RuntimeException refused) {
                        session.refuse(a.getAttemptId(), refused);
                        return;
                    }
                    session.submit(call);
                }

                @Override
                public void onError(Throwable t) {
                    ended();
                }

                @Override
                public void onCompleted() {
                    ended();
                    out.onCompleted();
                }

                private void ended() {
                    Session s = session;
                    if (s == null) {
                        return;
                    }
                    s.sender.detach();
                    s.ended = true;
                    leases.schedule(() -> {
                        if (sessions.get(s.node.tag) == s) {
                            s.expire();
                        }
                    }, s.leaseMillis, TimeUnit.MILLISECONDS);
                }
            };
        }

        @Override
        public void stats(StatsRequest request, StreamObserver<StatsReply> reply) {
            reply.onNext(NodeService.this.stats());
            reply.onCompleted();
        }
    }

    /** Pins an object of the node's store; null if the node does not hold it. */
    @FunctionalInterface
    private interface StoreOpen<T> {
        T open() throws InterruptedException;
    }

    private final class Data extends DataGrpc.DataImplBase {

        /** The generated service with {@code Pull} served from store views ({@link ChunkFrame.Sending}). */
        ServerServiceDefinition definition() {
            ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(DataGrpc.SERVICE_NAME);
            for (ServerMethodDefinition<?, ?> m : bindService().getMethods()) {
                if (!m.getMethodDescriptor().getFullMethodName().equals(ChunkFrame.PULL_SERVED.getFullMethodName())) {
                    b.addMethod(m);
                }
            }
            return b.addMethod(ChunkFrame.PULL_SERVED, ServerCalls.asyncServerStreamingCall(this::pullFromView)).build();
        }

        /** Opens an object for a call; null (the call ended with the matching status) if it cannot. */
        private <T> T open(StreamObserver<?> out, ObjectId id, StoreOpen<T> open) {
            try {
                T opened = open.open();
                if (opened == null) {
                    out.onError(Status.NOT_FOUND.withDescription("node " + address + " holds no object " + id
                            + " in its store").asRuntimeException());
                }
                return opened;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                out.onError(Status.CANCELLED.asRuntimeException());
            } catch (IllegalStateException | StoreClosedException stopping) {
                out.onError(Status.UNAVAILABLE.withDescription("node " + address + " is stopping").asRuntimeException());
            } catch (RuntimeException unusable) {
                out.onError(Status.FAILED_PRECONDITION.withDescription(unusable.getMessage()).asRuntimeException());
            }
            return null;
        }

        /** {@code Data.Pull}, served with {@link ChunkFrame#PULL_SERVED} in place of the generated method. */
        void pullFromView(PullRequest request, StreamObserver<ChunkFrame.Sending> plainOut) {
            ServerCallStreamObserver<ChunkFrame.Sending> out = (ServerCallStreamObserver<ChunkFrame.Sending>) plainOut;
            if (request.getMoreCount() > 0) {
                // A caller that thinks Pull streams several objects would read one and lose the rest.
                out.onError(Status.INVALID_ARGUMENT.withDescription("Pull streams one object; the request names "
                        + request.getMoreCount() + " more (PullRequest.more is Lend's)").asRuntimeException());
                return;
            }
            ObjectId id = WireCodec.id(request.getId());
            NodeStore.Streaming reading = open(out, id, () -> runtime.store().stream(id));
            if (reading != null) {
                new FrameSender(out, reading, id).start();
            }
        }

        @Override
        public void lend(PullRequest request, StreamObserver<Lent> plainOut) {
            ServerCallStreamObserver<Lent> out = (ServerCallStreamObserver<Lent>) plainOut;
            if (!runtime.store().sharesMemory()) {
                // nothing of this store is in a file another process can map: say so (no host)
                // once per object, and the caller copies from this node from now on
                for (int i = 0; i <= request.getMoreCount(); i++) {
                    out.onNext(Lent.getDefaultInstance());
                }
                out.onCompleted();
                return;
            }
            List<NodeStore.Lending> lendings = new ArrayList<>(1 + request.getMoreCount());
            for (int i = 0; i <= request.getMoreCount(); i++) {
                ObjectId id = WireCodec.id(i == 0 ? request.getId() : request.getMore(i - 1));
                NodeStore.Lending lending = open(out, id, () -> runtime.store().lend(id));
                if (lending == null) {
                    lendings.forEach(NodeStore.Lending::close); // the call ended with why
                    return;
                }
                lendings.add(lending);
            }
            // Pinned until the caller ends the call: a copy's deadline bounds a caller that never
            // does; a loan (SameHost.Loan) lasts as long as its task, and its caller's death ends
            // the call with the connection.
            out.setOnCancelHandler(() -> lendings.forEach(NodeStore.Lending::close));
            Path directory = runtime.store().directoryFile();
            for (NodeStore.Lending lending : lendings) {
                out.onNext(Lent.newBuilder().setHost(SameHost.ID).setFile(lending.where().file().toString())
                        .setOffset(lending.where().offset()).setLength(lending.where().length())
                        .setMemoryRegion(lending.where().inMemoryRegion())
                        .setDirectory(directory == null ? "" : directory.toString()).build());
            }
        }

        @Override
        public StreamObserver<Chunk> put(StreamObserver<PutReply> reply) {
            return new StreamObserver<>() {
                private ObjectId id;
                private byte[] frame;
                private int filled;
                private Session session;

                @Override
                public void onNext(Chunk c) {
                    if (frame == null) {
                        id = WireCodec.id(c.getId());
                        session = sessions.get(c.getSession());
                        if (c.getTotal() < 0 || c.getTotal() > storeBytes) {
                            reply.onError(Status.INVALID_ARGUMENT.withDescription("put of " + c.getTotal()
                                    + " bytes does not fit node " + address).asRuntimeException());
                            return;
                        }
                        frame = new byte[Math.toIntExact(c.getTotal())];
                    }
                    ByteString data = c.getData();
                    if (filled + data.size() > frame.length) {
                        reply.onError(Status.INVALID_ARGUMENT.withDescription("put of object " + id
                                + " sent more than its " + frame.length + " bytes").asRuntimeException());
                        return;
                    }
                    data.copyTo(frame, filled);
                    filled += data.size();
                }

                @Override
                public void onError(Throwable t) {
                    frame = null;
                }

                @Override
                public void onCompleted() {
                    if (frame == null || filled != frame.length) {
                        reply.onError(Status.INVALID_ARGUMENT.withDescription("put of object " + id
                                + " ended after " + filled + " bytes").asRuntimeException());
                        return;
                    }
                    try {
                        runtime.store().putFrame(id, MemorySegment.ofArray(frame));
                        if (session != null) {
                            session.objects.put(id, Boolean.TRUE);
                        }
                        reply.onNext(PutReply.newBuilder().setSize(frame.length).build());
                        reply.onCompleted();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        reply.onError(Status.CANCELLED.asRuntimeException());
                    } catch (RuntimeException e) {
                        reply.onError(Status.RESOURCE_EXHAUSTED.withDescription("node " + address
                                + " cannot store object " + id + ": " + e.getMessage()).asRuntimeException());
                    }
                }
            };
        }
    }

    /**
     * Streams one pinned frame in chunks, each sent when the transport is ready for it (gRPC's
     * flow control), so a slow puller never makes the holder buffer the object on its heap. A
     * spilled frame's chunks are read from its spill file one at a time.
     */
    private static final class FrameSender implements Runnable {
        private final ServerCallStreamObserver<ChunkFrame.Sending> out;
        /** Where each chunk's payload passes to the transport, which takes only arrays. */
        private final byte[] scratch = new byte[SCRATCH_BYTES];
        private final NodeStore.Streaming reading;
        private final ObjectId id;
        private long offset;
        private boolean done;

        FrameSender(ServerCallStreamObserver<ChunkFrame.Sending> out, NodeStore.Streaming reading, ObjectId id) {
            this.out = out;
            this.reading = reading;
            this.id = id;
        }

        void start() {
            out.setOnCancelHandler(this::finish);
            out.setOnReadyHandler(this);
            run();
        }

        @Override
        public synchronized void run() {
            long total = reading.size();
            while (!done && out.isReady()) {
                int n = (int) Math.min(CHUNK_BYTES, total - offset);
                // A view of the pinned frame, or of the reader's window over its spill file: gRPC
                // drains it into its transport buffers during onNext, before the next chunk is read.
                MemorySegment view;
                try {
                    view = reading.chunk(offset, n);
                } catch (IOException | RuntimeException unreadable) {
                    out.onError(Status.DATA_LOSS.withDescription("node cannot read object " + id + " at offset "
                            + offset + ": " + unreadable.getMessage()).asRuntimeException());
                    finish();
                    return;
                }
                out.onNext(new ChunkFrame.Sending(offset == 0 ? WireCodec.key(id) : null, total, view, scratch));
                offset += n;
                if (offset == total) {
                    out.onCompleted();
                    finish();
                }
            }
        }

        private synchronized void finish() {
            if (!done) {
                done = true;
                reading.close();
            }
        }
    }

    /**
     * Stops serving: new calls are refused, running tasks interrupted, the store's memory and
     * files released.
     */
    @Override
    public void close() {
        server.shutdown();
        runtime.kill();
        runtime.awaitStopped(EmbeddedBackend.CLOSE_WAIT_MILLIS);
        peers.close();
        leases.shutdownNow();
        sender.shutdown();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.shutdownNow();
        loops.close();
        spillRoot.close();
    }

    /**
     * A node that did not answer, named with gRPC's status and the transport's reason under it
     * (gRPC says "io exception"; its cause says "Connection refused").
     */
    static CroupierException unreachable(String address, StatusRuntimeException e) {
        String description = e.getStatus().getDescription();
        String why = withReason(description, e.getStatus().getCause() != null ? e.getStatus().getCause() : e.getCause());
        return new CroupierException(ErrorCode.UNAVAILABLE, "node " + address + " cannot be reached: "
                + e.getStatus().getCode() + (why == null ? "" : " (" + why + ")"), e);
    }

    /**
     * {@code message} and, when it does not say it already, the message of the deepest cause of
     * {@code cause}: the transport's reason under a wrapper's words ("Failed to bind", "io
     * exception"). Null when there is neither.
     */
    public static String withReason(String message, Throwable cause) {
        Throwable root = cause;
        while (root != null && root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String reason = root == null ? null : root.getMessage();
        if (reason == null || message != null && message.contains(reason)) {
            return message;
        }
        return message == null ? reason : message + ": " + reason;
    }

    /** Deadline of a status query: long enough for a busy node, short enough for a person waiting. */
    private static final long STATUS_DEADLINE_MILLIS = 10_000;

    /**
     * Asks the node at {@code hostPort} for its {@code Stats} over a channel of its own, closed
     * before returning, with the token of {@code CROUPIER_TOKEN} if set;
     * {@link dev.croupier.futures.NodeStatus#query} documents it.
     */
    public static dev.croupier.futures.NodeStatus status(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        int port = -1;
        if (colon > 0) {
            try {
                port = Integer.parseInt(hostPort.substring(colon + 1));
            } catch (NumberFormatException notANumber) {
                // refused below, with the rest of the bad forms
            }
        }
        if (port < 1 || port > 65535) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "NodeStatus.query: '" + hostPort + "' is not HOST:PORT");
        }
        try (EventLoops loops = new EventLoops("croupier-status-io");
             PeerChannels channels = new PeerChannels(CallToken.of(null), TlsFiles.fromEnvironment(), loops)) {
            StatsReply r = ControlGrpc.newBlockingStub(channels.channel(hostPort))
                    .withDeadlineAfter(STATUS_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
                    .stats(StatsRequest.getDefaultInstance());
            return new dev.croupier.futures.NodeStatus(hostPort, r.getStoreUsed(), r.getStoreCapacity(),
                    r.getBytesSpilled(), r.getTasksRunning(), r.getTasksQueued(), r.getSessionsCount(),
                    r.getTasksList().stream().map(t -> new dev.croupier.futures.NodeStatus.TaskCount(t.getName(),
                            t.getStarted(), t.getFinished(), t.getFailed())).toList());
        } catch (StatusRuntimeException e) {
            throw unreachable(hostPort, e);
        }
    }
}
