package dev.croupier.futures.internal;

import com.google.protobuf.UnsafeByteOperations;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.wire.CancelBatch;
import dev.croupier.futures.wire.Chunk;
import dev.croupier.futures.wire.CodePart;
import dev.croupier.futures.wire.CodeReply;
import dev.croupier.futures.wire.ControlGrpc;
import dev.croupier.futures.wire.DataGrpc;
import dev.croupier.futures.wire.DispatchBatch;
import dev.croupier.futures.wire.DriverMessage;
import dev.croupier.futures.wire.FreeBatch;
import dev.croupier.futures.wire.Location;
import dev.croupier.futures.wire.NodeMessage;
import dev.croupier.futures.wire.Outcome;
import dev.croupier.futures.wire.PeerTable;
import dev.croupier.futures.wire.PutReply;
import dev.croupier.futures.wire.RegisterReply;
import dev.croupier.futures.wire.RegisterRequest;
import dev.croupier.futures.wire.StatsReply;
import dev.croupier.futures.wire.StatsRequest;
import dev.croupier.objectstore.ObjectId;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The node protocol over gRPC: each node is a process ({@link NodeService}) at an address, with
 * one registered session and one bidirectional stream from this driver.
 *
 * <p>Design. Commands to a node (attempts, cancels, frees) go into its {@link Outbox}; whichever
 * thread finds the outbox idle sends everything queued as one message per kind, so a burst of
 * tiny tasks costs one message, and ordering per node is kept (a cancel never overtakes its
 * dispatch). Outcomes arrive in batches on the stream's thread and go straight to the owner. A
 * stream that ends or fails means the node is dead to this driver: the owner resubmits its
 * attempts and its objects are lost. Values the driver reads are pulled with the data service
 * into the driver's heap; values it puts are streamed in chunks. Nodes this driver started
 * ({@link NodeProcesses}) can be killed and restarted; for nodes it only connected to, it
 * resolves their names again periodically ({@link Membership}): a node answering at an address
 * without a live node joins as a new incarnation, a node whose address is gone is lost.
 * Thread-safe.
 */
final class ProcessBackend implements Backend {

    /**
     * How long a node keeps a session's objects after its stream ends, or after the driver
     * last said anything on it; at least two heartbeat timeouts, so a live driver never goes
     * that long without a word.
     */
    static final long LEASE_MILLIS = 10_000;
    /** Deadline of a control call (register, stats). */
    private static final long CALL_DEADLINE_MILLIS = 10_000;

    private final List<String> addresses;
    private final ValueCodecs codecs;
    /** The codecs as nodes receive them; empty if there are none. */
    private final byte[] codecFrame;
    private final List<String> allowList;
    private final long session;
    private final int inlineBelow;
    private final NodeProcesses processes;
    private final PeerChannels channels;
    /** Under the channels to the nodes; ended last by {@link #close}. */
    private final EventLoops loops = new EventLoops("croupier-driver-io");
    /** Sends every node's queued commands; one thread, so messages to a node keep their order. */
    private final java.util.concurrent.ExecutorService sender = java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> Thread.ofPlatform().daemon().name("croupier-driver-sender").unstarted(r));
    private final Map<NodeLink, Outbox> outboxes = new ConcurrentHashMap<>();
    /** The code classes of dispatched attempts, by name, to ship to a node that lacks one. */
    private final Map<String, Class<?>> codeClasses = new ConcurrentHashMap<>();
    /** Jars of code sources shipped so far, by location: built once per driver. */
    private final Map<String, byte[]> jars = new ConcurrentHashMap<>();
    /** Ships code to nodes that ask; off the stream's thread, which must go on taking outcomes. */
    private final java.util.concurrent.ExecutorService codeShipper = java.util.concurrent.Executors
            .newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().name("croupier-driver-code").unstarted(r));
    /** Current address by node id; sent to every node as the session's peer table. */
    private final CopyOnWriteArrayList<String> byId = new CopyOnWriteArrayList<>();
    private volatile Events events;
    private volatile long storeBytes;
    private final long heartbeatTimeoutNanos;
    /**
     * The names a driver connected to, resolved again every {@code every}: an address without a
     * live node is offered to the owner ({@link Events#nodeFound}), a live node at an address no
     * name resolves to any more is lost.
     */
    record Membership(List<String> names, java.util.function.UnaryOperator<List<String>> resolver,
                      java.time.Duration every) {}

    private final Membership membership;
    /** Resolves the names again; apart from heartbeats, so a slow lookup never delays them. */
    private final java.util.concurrent.ScheduledExecutorService resolving =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                    r -> Thread.ofPlatform().daemon().name("croupier-driver-resolver").unstarted(r));
    /** Sends heartbeats and declares silent nodes dead, four times per timeout. */
    private final java.util.concurrent.ScheduledExecutorService heartbeats =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                    r -> Thread.ofPlatform().daemon().name("croupier-driver-heartbeats").unstarted(r));

    /**
     * @param inlineBelow outputs smaller than this come back with their outcome and stay here
     * @param heartbeatTimeout a node not heard from for this long is dead to this driver
     * @param token carried by every call, or null
     * @param tls how calls are encrypted, or null for plaintext
     * @param processes the node processes this driver started, or null if it only connects
     * @param membership the names to resolve again, or null (nodes this driver started)
     */
    ProcessBackend(List<String> addresses, ValueCodecs codecs, byte[] codecFrame, List<String> allowList,
                   long session, int inlineBelow, java.time.Duration heartbeatTimeout, CallToken token,
                   TlsFiles tls, NodeProcesses processes, Membership membership) {
        this.membership = membership;
        this.channels = new PeerChannels(token, tls, loops);
        this.heartbeatTimeoutNanos = heartbeatTimeout.toNanos();
        this.codecFrame = codecFrame;
        this.inlineBelow = inlineBelow;
        this.addresses = List.copyOf(addresses);
        this.codecs = codecs;
        this.allowList = List.copyOf(allowList);
        this.session = session;
        this.processes = processes;
    }

    @Override
    public List<NodeLink> start(Events events) {
        this.events = events;
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(50), heartbeatTimeoutNanos / 4);
        heartbeats.scheduleWithFixedDelay(this::beat, period, period, TimeUnit.NANOSECONDS);
        List<NodeLink> links = new ArrayList<>();
        try {
            // Registrations are round trips to different nodes: made at once, then attached in order.
            List<java.util.concurrent.CompletableFuture<RegisterReply>> replies = new ArrayList<>();
            try (var registering = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < addresses.size(); i++) {
                    int id = i;
                    replies.add(java.util.concurrent.CompletableFuture.supplyAsync(
                            () -> register(id, addresses.get(id)), registering));
                }
            }
            for (int i = 0; i < addresses.size(); i++) {
                links.add(attach(i, addresses.get(i), replies.get(i).join()));
            }
        } catch (java.util.concurrent.CompletionException e) {
            close();
            throw e.getCause() instanceof RuntimeException r ? r : e;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        if (membership != null) {
            long every = membership.every().toNanos();
            resolving.scheduleWithFixedDelay(this::resolveAgain, every, every, TimeUnit.NANOSECONDS);
        }
        return links;
    }

    /**
     * Compares what the names resolve to now with the live nodes: a live node whose address is
     * gone is lost (its attempts go elsewhere, its objects are rebuilt when needed); an address
     * without a live node is offered to the owner, which connects it as a new incarnation if a
     * node answers there. A lookup that fails changes nothing: a DNS hiccup must not cost nodes.
     */
    private void resolveAgain() {
        List<String> now;
        try {
            now = membership.resolver().apply(membership.names());
        } catch (RuntimeException lookupFailed) {
            return;
        }
        java.util.Set<String> live = new java.util.HashSet<>();
        for (Outbox o : outboxes.values()) {
            if (now.contains(o.link.address)) {
                live.add(o.link.address);
            } else {
                o.departed();
            }
        }
        for (String address : now) {
            if (live.contains(address)) {
                continue;
            }
            // a channel that failed to connect waits out a growing backoff (up to 2 min) before
            // it tries again; a node that came back must be reached now
            channels.channel(address).resetConnectBackoff();
            try {
                events.nodeFound(address, id -> connect(id, address));
            } catch (CroupierException notAnswering) {
                // nobody serves there yet; the next round tries again
            }
        }
    }

    @Override
    public boolean encodes() {
        return true;
    }

    /**
     * Declares dead every node not heard from within the timeout (a crashed host, a cut link or
     * a stopped process keeps a TCP connection open without a word), and asks the others for a
     * word.
     */
    private void beat() {
        long now = System.nanoTime();
        DriverMessage beat = DriverMessage.newBuilder().setSession(session).setHeartbeat(true).build();
        for (Outbox o : outboxes.values()) {
            if (now - o.lastHeard > heartbeatTimeoutNanos) {
                o.silent();
            } else {
                o.send(beat);
            }
        }
    }

    private NodeLink connect(int id, String address) {
        return attach(id, address, register(id, address));
    }

    /** Registers this driver's session with the node at {@code address}, as its node {@code id}. */
    private RegisterReply register(int id, String address) {
        try {
            return ControlGrpc.newBlockingStub(channels.channel(address))
                    .withDeadlineAfter(CALL_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
                    .register(RegisterRequest.newBuilder()
                            .setProtocolVersion(NodeService.PROTOCOL_VERSION)
                            .setCroupierVersion(CroupierVersion.get())
                            .setSession(session)
                            .setNode(id)
                            .setLeaseMillis(Math.max(LEASE_MILLIS, 2 * TimeUnit.NANOSECONDS.toMillis(heartbeatTimeoutNanos)))
                            .setInlineBelow(inlineBelow)
                            .setCodecs(com.google.protobuf.ByteString.copyFrom(codecFrame))
                            .addAllSerializableAllowList(allowList)
                            .build());
        } catch (StatusRuntimeException e) {
            throw switch (e.getStatus().getCode()) {
                case FAILED_PRECONDITION, UNAUTHENTICATED -> new CroupierException(ErrorCode.UNAVAILABLE,
                        "node " + address + " refused this driver: " + e.getStatus().getDescription(), e);
                default -> NodeService.unreachable(address, e);
            };
        }
    }

    /** Opens the streams of a registered node and tells every node where its peers are. */
    private NodeLink attach(int id, String address, RegisterReply reply) {
        storeBytes = reply.getStoreBytes();
        NodeLink link = new NodeLink(id, reply.getCpus(), address);
        synchronized (byId) {
            if (id < byId.size()) {
                byId.set(id, address);
            } else {
                byId.add(address);
            }
        }
        Outbox outbox = new Outbox(link);
        // Opened before it is published: the heartbeat thread sends on the stream of every
        // outbox it finds, and one found unopened was declared lost (a null stream).
        outbox.open();
        outboxes.put(link, outbox);
        if (outbox.isClosed()) {
            outboxes.remove(link, outbox); // its stream failed at once, before it was published
        }
        PeerTable.Builder peers = PeerTable.newBuilder();
        for (int i = 0; i < byId.size(); i++) {
            peers.addNodes(Location.newBuilder().setNode(i).setAddress(byId.get(i)));
        }
        for (Outbox o : outboxes.values()) {
            o.send(DriverMessage.newBuilder().setSession(session).setPeers(peers).build());
        }
        return link;
    }

    /**
     * Answers a node's {@code CodeWanted}: streams the jar of the class's code source
     * ({@link CodeSourceJar}), or says why it cannot, so the node's waiting attempts run or fail
     * with the reason. A call that fails leaves the node to its heartbeats.
     */
    private void shipCode(String address, String className) {
        byte[] jar = null;
        String refusal = null;
        Class<?> holder = codeClasses.get(className);
        if (holder == null) {
            refusal = "this driver sent no task code of that class";
        } else {
            try {
                jar = jars.computeIfAbsent(holder.getProtectionDomain().getCodeSource() == null ? className
                        : String.valueOf(holder.getProtectionDomain().getCodeSource().getLocation()), location -> {
                    try {
                        return CodeSourceJar.of(holder);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
            } catch (java.io.UncheckedIOException e) {
                refusal = e.getCause().getMessage();
            }
        }
        CountDownLatch answered = new CountDownLatch(1);
        StreamObserver<CodePart> out = ControlGrpc.newStub(channels.channel(address))
                .withDeadlineAfter(CALL_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
                .shipCode(new StreamObserver<>() {
                    @Override
                    public void onNext(CodeReply reply) {}

                    @Override
                    public void onError(Throwable t) {
                        answered.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        answered.countDown();
                    }
                });
        try {
            CodePart.Builder first = CodePart.newBuilder().setSession(session).setClassName(className);
            if (jar == null) {
                out.onNext(first.setRefusal(refusal).build());
            } else {
                for (int offset = 0; offset == 0 || offset < jar.length; offset += NodeService.CHUNK_BYTES) {
                    CodePart.Builder part = offset == 0 ? first.setTotal(jar.length) : CodePart.newBuilder();
                    out.onNext(part.setData(UnsafeByteOperations.unsafeWrap(jar, offset,
                            Math.min(NodeService.CHUNK_BYTES, jar.length - offset))).build());
                }
            }
            out.onCompleted();
            answered.await(CALL_DEADLINE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            out.onError(e);
        } catch (RuntimeException callFailed) {
            out.onError(callFailed);
        }
    }

    /**
     * A node's command queue and its stream. Commands are queued under the monitor; one sender
     * at a time drains them into messages, outside the monitor, so producers never wait on the
     * network. Thread-safe.
     */
    private final class Outbox implements StreamObserver<NodeMessage> {
        private final NodeLink link;
        private StreamObserver<DriverMessage> stream;
        private DispatchBatch.Builder dispatch = DispatchBatch.newBuilder();
        private CancelBatch.Builder cancel = CancelBatch.newBuilder();
        private FreeBatch.Builder free = FreeBatch.newBuilder();
        private boolean sending;
        private boolean closed;
        /** When the node last said anything (an outcome or a heartbeat). */
        volatile long lastHeard = System.nanoTime();

        Outbox(NodeLink link) {
            this.link = link;
        }

        /** Opens the stream; before the outbox is published, which makes the field visible. */
        void open() {
            stream = ControlGrpc.newStub(channels.channel(link.address)).session(this);
        }

        synchronized boolean isClosed() {
            return closed;
        }

        void dispatch(dev.croupier.futures.wire.Attempt attempt) {
            synchronized (this) {
                dispatch.addAttempts(attempt);
            }
            drain();
        }

        void cancel(long attemptId) {
            synchronized (this) {
                cancel.addAttemptIds(attemptId);
            }
            drain();
        }

        void free(ObjectId id) {
            synchronized (this) {
                free.addIds(WireCodec.key(id));
            }
            drain();
        }

        void send(DriverMessage message) {
            synchronized (this) {
                if (closed) {
                    return;
                }
            }
            try {
                synchronized (stream) {
                    stream.onNext(message);
                }
            } catch (RuntimeException streamGone) {
                ended("its stream could not take a message: " + streamGone);
            }
        }

        /**
         * Sends what is queued, on the backend's sender thread: the caller only queues, so a
         * burst of submissions from one thread becomes a few large messages, not one each.
         */
        private void drain() {
            synchronized (this) {
                if (sending || closed) {
                    return;
                }
                sending = true;
            }
            sender.execute(this::send);
        }

        private void send() {
            while (true) {
                List<DriverMessage> messages = new ArrayList<>(3);
                synchronized (this) {
                    if (dispatch.getAttemptsCount() > 0) {
                        messages.add(DriverMessage.newBuilder().setSession(session).setDispatch(dispatch).build());
                        dispatch = DispatchBatch.newBuilder();
                    }
                    if (cancel.getAttemptIdsCount() > 0) {
                        messages.add(DriverMessage.newBuilder().setSession(session).setCancel(cancel).build());
                        cancel = CancelBatch.newBuilder();
                    }
                    if (free.getIdsCount() > 0) {
                        messages.add(DriverMessage.newBuilder().setSession(session).setFree(free).build());
                        free = FreeBatch.newBuilder();
                    }
                    if (messages.isEmpty() || closed) {
                        sending = false;
                        return;
                    }
                }
                try {
                    synchronized (stream) {
                        for (DriverMessage m : messages) {
                            stream.onNext(m);
                        }
                    }
                } catch (RuntimeException streamGone) {
                    ended("its stream could not take a message: " + streamGone);
                    return;
                }
            }
        }

        @Override
        public void onNext(NodeMessage m) {
            lastHeard = System.nanoTime();
            if (m.hasDraining()) {
                events.nodeDraining(link);
            }
            if (m.hasOutcomes()) {
                for (Outcome o : m.getOutcomes().getOutcomesList()) {
                    events.outcome(link, WireCodec.fromWire(o, codecs));
                }
            } else if (m.hasCodeWanted()) {
                String className = m.getCodeWanted().getClassName();
                codeShipper.execute(() -> shipCode(link.address, className));
            }
        }

        @Override
        public void onError(Throwable t) {
            ended("its stream failed: " + t);
        }

        @Override
        public void onCompleted() {
            ended("its stream ended");
        }

        /** The stream ended or failed, as {@code why} says: the node is dead to this driver. */
        private void ended(String why) {
            long silent = System.nanoTime() - lastHeard;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            outboxes.remove(link, this);
            String process = "";
            if (processes != null) {
                // a node of ours that is silent or cut off is of no more use; one that ended by
                // itself says why in its log, which is kept
                process = processes.lose(link.id);
            }
            LOG.log(System.Logger.Level.WARNING, "node " + link.id + " at " + link.address + " is lost: " + why + process);
            events.nodeDied(link, silent);
        }

        private static final System.Logger LOG = System.getLogger(ProcessBackend.class.getName());

        /** Missed its heartbeats: dead to this driver; whatever it sends later is ignored. */
        void silent() {
            endWith(link + " missed its heartbeats");
        }

        /** No name resolves to its address any more: lost to this driver, as a silent node is. */
        void departed() {
            endWith(link + " is no longer among the addresses its names resolve to");
        }

        private void endWith(String why) {
            ended(why);
            try {
                synchronized (stream) {
                    stream.onError(io.grpc.Status.UNAVAILABLE.withDescription(why).asRuntimeException());
                }
            } catch (RuntimeException alreadyGone) {
                // nothing to end
            }
        }

        void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            try {
                stream.onCompleted();
            } catch (RuntimeException alreadyGone) {
                // nothing to end
            }
        }
    }

    @Override
    public NodeLink startNode(int id) {
        if (processes == null) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "node " + id + " was not started by this driver;"
                    + " restart it where it runs, and connect again");
        }
        return connect(id, processes.start(id));
    }

    /** The process id of node {@code id}, if this driver started it and it runs; -1 otherwise. */
    long pid(int id) {
        return processes == null ? -1 : processes.pid(id);
    }

    @Override
    public void kill(NodeLink node) {
        Outbox outbox = outboxes.remove(node);
        if (processes != null) {
            processes.kill(node.id);
        }
        if (outbox != null) {
            outbox.close();
        }
    }

    @Override
    public void dispatch(NodeLink node, AttemptCall call) {
        Outbox outbox = outboxes.get(node);
        if (call.code() != null && call.code().holder() != null) {
            codeClasses.putIfAbsent(call.code().className(), call.code().holder());
        }
        if (outbox != null) {
            outbox.dispatch(WireCodec.toWire(call, this::address));
        }
    }

    private String address(int node) {
        return node < byId.size() ? byId.get(node) : "";
    }

    @Override
    public void cancel(NodeLink node, long attemptId) {
        Outbox outbox = outboxes.get(node);
        if (outbox != null) {
            outbox.cancel(attemptId);
        }
    }

    @Override
    public void free(NodeLink node, ObjectId id) {
        Outbox outbox = outboxes.get(node);
        if (outbox != null) {
            outbox.free(id);
        }
    }

    @Override
    public NodeStore.Reading read(NodeLink node, ObjectId id) throws InterruptedException {
        byte[][] frame = new byte[1][];
        long size = channels.pull(node.address, session, id, total -> {
            frame[0] = new byte[Math.toIntExact(total)];
            return MemorySegment.ofArray(frame[0]);
        });
        if (size < 0) {
            if (!node.alive()) {
                throw new IllegalStateException(node + " is dead");
            }
            return null;
        }
        return NodeStore.Reading.of(MemorySegment.ofArray(frame[0]));
    }

    @Override
    public long put(NodeLink node, ObjectId id, ValueCodecs.Encoded value) throws InterruptedException {
        byte[] frame = new byte[Math.toIntExact(value.size())];
        value.writeTo(MemorySegment.ofArray(frame));
        CountDownLatch done = new CountDownLatch(1);
        Throwable[] failure = new Throwable[1];
        StreamObserver<Chunk> out = DataGrpc.newStub(channels.channel(node.address))
                .withDeadlineAfter(PeerChannels.deadlineMillis(frame.length), TimeUnit.MILLISECONDS)
                .put(new StreamObserver<>() {
                    @Override
                    public void onNext(PutReply reply) {}

                    @Override
                    public void onError(Throwable t) {
                        failure[0] = t;
                        done.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        done.countDown();
                    }
                });
        int offset = 0;
        do {
            int n = Math.min(NodeService.CHUNK_BYTES, frame.length - offset);
            Chunk.Builder c = Chunk.newBuilder().setData(UnsafeByteOperations.unsafeWrap(frame, offset, n));
            if (offset == 0) {
                c.setId(WireCodec.key(id)).setTotal(frame.length).setSession(session);
            }
            out.onNext(c.build());
            offset += n;
        } while (offset < frame.length);
        out.onCompleted();
        done.await();
        if (failure[0] != null) {
            throw new IllegalStateException("put of " + id + " on " + node + " failed: " + failure[0].getMessage(),
                    failure[0]);
        }
        return frame.length;
    }

    @Override
    public ClusterStats.NodeStats stats(NodeLink node) {
        if (!node.alive()) {
            return new ClusterStats.NodeStats(node.id, false, 0, 0, 0, 0, 0, 0, node.waiting());
        }
        try {
            StatsReply r = ControlGrpc.newBlockingStub(channels.channel(node.address))
                    .withDeadlineAfter(CALL_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
                    .stats(StatsRequest.getDefaultInstance());
            return new ClusterStats.NodeStats(node.id, true, r.getTasksRun(), r.getObjects(), r.getStoreUsed(),
                    r.getBytesSpilled(), r.getBytesRestored(), r.getBytesFetched(), node.waiting());
        } catch (StatusRuntimeException e) {
            return new ClusterStats.NodeStats(node.id, node.alive(), 0, 0, 0, 0, 0, 0, node.waiting());
        }
    }

    @Override
    public long objectStoreBytes() {
        return storeBytes;
    }

    @Override
    public void close() {
        resolving.shutdownNow();
        heartbeats.shutdownNow();
        for (Outbox o : outboxes.values()) {
            o.close();
        }
        outboxes.clear();
        sender.shutdown();
        codeShipper.shutdownNow();
        if (processes != null) {
            processes.close();
        }
        channels.close();
        loops.close();
    }
}
