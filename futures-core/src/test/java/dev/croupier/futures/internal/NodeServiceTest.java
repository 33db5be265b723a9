package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.croupier.futures.wire.Chunk;
import dev.croupier.futures.wire.ControlGrpc;
import dev.croupier.futures.wire.DataGrpc;
import dev.croupier.futures.wire.DriverMessage;
import dev.croupier.futures.wire.NodeMessage;
import dev.croupier.futures.wire.PutReply;
import dev.croupier.futures.wire.RegisterRequest;
import dev.croupier.futures.wire.StatsReply;
import dev.croupier.futures.wire.StatsRequest;
import dev.croupier.objectstore.ObjectId;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's side of the protocol, driven by a raw gRPC client: a driver of another version is
 * refused with both versions named, and a session whose stream ends has its objects freed when
 * its lease runs out while another session's stay.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeServiceTest {

    @TempDir
    Path spill;
    private NodeService node;
    private final EventLoops loops = new EventLoops("test-io");
    private PeerChannels channels;

    @BeforeEach
    void start() throws Exception {
        node = new NodeService("127.0.0.1", 0, 1, 32L << 20, 1024, null, spill, null, null, null, null);
        channels = new PeerChannels(null, null, loops);
    }

    @AfterEach
    void stop() {
        channels.close();
        loops.close();
        node.close();
    }

    private RegisterRequest.Builder register(long session, long leaseMillis) {
        return RegisterRequest.newBuilder()
                .setProtocolVersion(NodeService.PROTOCOL_VERSION)
                .setCroupierVersion(CroupierVersion.get())
                .setSession(session)
                .setLeaseMillis(leaseMillis);
    }

    private ControlGrpc.ControlBlockingStub control() {
        ManagedChannel c = channels.channel(node.address());
        return ControlGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static HealthCheckResponse.ServingStatus health(PeerChannels channels, String address, String service) {
        return HealthGrpc.newBlockingStub(channels.channel(address)).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void readinessSaysServingOnlyOnceTheStoreIsOpenAndNotWhileDraining() throws Exception {
        java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Path other = spill.resolve("other");
        java.nio.file.Files.createDirectories(other);
        StartupTap.arm(address -> {
            seen.add("ready " + health(channels, address, NodeService.READINESS));
            seen.add("live " + health(channels, address, NodeService.LIVENESS));
            StatusRuntimeException early = assertThrows(StatusRuntimeException.class, () -> ControlGrpc
                    .newBlockingStub(channels.channel(address)).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .register(register(9, 1000).build()));
            seen.add("register " + early.getStatus().getCode());
            try (var files = java.nio.file.Files.walk(other)) {
                seen.add("store files " + files.filter(f -> !f.equals(other) && !f.getParent().equals(other)).count());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        NodeService starting = new NodeService("127.0.0.1", 0, 1, 32L << 20, 1024, null, other, null, null, null, null);
        try {
            assertEquals(java.util.List.of("ready NOT_SERVING", "live SERVING", "register UNAVAILABLE", "store files 0"),
                    seen, "before its store opens the node is alive, not ready, and takes no call");
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, health(channels, starting.address(), NodeService.READINESS));
            control().register(register(1, 60_000).build()); // on the other node: the test's own
            assertTrue(starting.drain(java.time.Duration.ofSeconds(5)), "an idle node drains at once");
            assertEquals(HealthCheckResponse.ServingStatus.NOT_SERVING,
                    health(channels, starting.address(), NodeService.READINESS));
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, health(channels, starting.address(), NodeService.LIVENESS));
            StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> ControlGrpc
                    .newBlockingStub(channels.channel(starting.address())).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .register(register(2, 1000).build()));
            assertTrue(refused.getStatus().getDescription().contains("is stopping"), refused.getStatus().toString());
        } finally {
            starting.close();
        }
    }

    @Test
    void aDriverOfAnotherVersionIsRefusedWithBothVersionsNamed() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> control().register(register(1, 1000).setCroupierVersion("0.0.1-other").build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        String why = e.getStatus().getDescription();
        assertTrue(why.contains("0.0.1-other") && why.contains(CroupierVersion.get()) && why.contains(node.address()),
                why);
        StatusRuntimeException p = assertThrows(StatusRuntimeException.class,
                () -> control().register(register(1, 1000).setProtocolVersion(99).build()));
        assertTrue(p.getStatus().getDescription().contains("protocol 99"), p.getStatus().getDescription());
    }

    @Test
    void anEndedSessionsObjectsAreFreedWhenItsLeaseRunsOutAndOthersStay() throws Exception {
        control().register(register(0xAAAAL, 200).build());
        control().register(register(0xBBBBL, 600_000).build());
        StreamObserver<DriverMessage> leaving = openSession(0xAAAAL);
        StreamObserver<DriverMessage> staying = openSession(0xBBBBL);
        put(0xAAAAL, new ObjectId(0xAAAAL, 1), 4096);
        put(0xBBBBL, new ObjectId(0xBBBBL, 1), 4096);
        assertEquals(2, stats().getObjects());
        leaving.onCompleted();
        while (stats().getObjects() != 1) {
            Thread.sleep(20); // the lease (200 ms) runs out; the test's timeout bounds the wait
        }
        assertEquals(1, stats().getSessionsCount());
        assertEquals(0xBBBBL, stats().getSessions(0));
        byte[][] kept = new byte[1][];
        long size = channels.pull(node.address(), 0xBBBBL, new ObjectId(0xBBBBL, 1), total -> {
            kept[0] = new byte[(int) total];
            return java.lang.foreign.MemorySegment.ofArray(kept[0]);
        });
        assertEquals(4096, size);
        assertEquals(-1, channels.pull(node.address(), 0xAAAAL, new ObjectId(0xAAAAL, 1), total -> null));
        staying.onCompleted();
    }

    @Test
    void aSessionWhoseDriverFallsSilentOnAnOpenStreamIsEndedAndFreedAfterItsLease() throws Exception {
        control().register(register(0xEEEEL, 300).build());
        control().register(register(0xFFFFL, 600_000).build());
        CountDownLatch hungUp = new CountDownLatch(1);
        Throwable[] why = new Throwable[1];
        StreamObserver<DriverMessage> silent = ControlGrpc.newStub(channels.channel(node.address()))
                .session(new StreamObserver<>() {
                    @Override
                    public void onNext(NodeMessage m) {}

                    @Override
                    public void onError(Throwable t) {
                        why[0] = t;
                        hungUp.countDown();
                    }

                    @Override
                    public void onCompleted() {}
                });
        silent.onNext(DriverMessage.newBuilder().setSession(0xEEEEL).setHeartbeat(true).build());
        StreamObserver<DriverMessage> other = openSession(0xFFFFL);
        put(0xEEEEL, new ObjectId(0xEEEEL, 1), 4096);
        put(0xFFFFL, new ObjectId(0xFFFFL, 1), 4096);
        assertEquals(2, stats().getObjects());
        // the stream stays open and says nothing more; the test's timeout bounds the wait
        assertTrue(hungUp.await(30, TimeUnit.SECONDS), "the node ends the silent driver's stream");
        assertEquals(Status.Code.UNAVAILABLE, Status.fromThrowable(why[0]).getCode());
        assertTrue(why[0].getMessage().contains("said nothing for its lease"), why[0].getMessage());
        assertEquals(1, stats().getObjects(), "the silent session's object is freed, the other's stays");
        assertEquals(java.util.List.of(0xFFFFL), stats().getSessionsList());
        other.onCompleted();
    }

    @Test
    void aPullReadsTheSameBytesThroughTheHoldersFileAndOverTheStream() throws Exception {
        control().register(register(0xCCCCL, 600_000).build());
        ObjectId id = new ObjectId(0xCCCCL, 9);
        int size = 9 << 20; // several stream chunks
        put(0xCCCCL, id, size);
        dev.croupier.futures.wire.PullRequest request = dev.croupier.futures.wire.PullRequest.newBuilder()
                .setSession(0xCCCCL).setId(WireCodec.key(id)).build();
        byte[] viaFile = new byte[size];
        assertEquals(size, new SameHost().copy(channels.channel(node.address()), node.address(), request,
                total -> java.lang.foreign.MemorySegment.ofArray(viaFile)), "the same-host path copies it");
        String before = System.getProperty(SameHost.PROPERTY);
        System.setProperty(SameHost.PROPERTY, "false");
        byte[] viaStream = new byte[size];
        try (PeerChannels streamOnly = new PeerChannels(null, null, loops)) {
            assertEquals(size, streamOnly.pull(node.address(), 0xCCCCL, id,
                    total -> java.lang.foreign.MemorySegment.ofArray(viaStream)));
        } finally {
            if (before == null) {
                System.clearProperty(SameHost.PROPERTY);
            } else {
                System.setProperty(SameHost.PROPERTY, before);
            }
        }
        org.junit.jupiter.api.Assertions.assertArrayEquals(viaFile, viaStream);
        assertEquals(ValueFrame.MAGIC, viaStream[0]);
        assertEquals((byte) (size - 1), viaStream[size - 1]);
    }

    /** {@code Pull} streams one object: a request naming more (as {@code Lend}'s may) is refused, not half answered. */
    @Test
    void aPullNamingMoreObjectsIsRefused() throws Exception {
        control().register(register(0xCDCDL, 600_000).build());
        put(0xCDCDL, new ObjectId(0xCDCDL, 1), 1000);
        put(0xCDCDL, new ObjectId(0xCDCDL, 2), 1000);
        dev.croupier.futures.wire.PullRequest two = request(0xCDCDL, 1).toBuilder()
                .addMore(WireCodec.key(new ObjectId(0xCDCDL, 2))).build();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> io.grpc.stub.ClientCalls
                .blockingServerStreamingCall(channels.channel(node.address()), ChunkFrame.PULL, io.grpc.CallOptions.DEFAULT, two)
                .forEachRemaining(chunk -> { }));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("Pull streams one object; the request names 1 more (PullRequest.more is Lend's)",
                e.getStatus().getDescription());
    }

    /**
     * After the first {@code Lend}, a holder's objects are found in its directory and copied
     * with no call; an object it does not list (here: one it does not hold) goes back to
     * {@code Lend}, which answers for it.
     */
    @Test
    void laterPullsFromAHolderCopyWhatItsDirectoryListsWithoutACall() throws Exception {
        control().register(register(0xABABL, 600_000).build());
        int size = 3 << 20;
        for (int i = 0; i < 3; i++) {
            put(0xABABL, new ObjectId(0xABABL, i), size + i);
        }
        java.util.concurrent.atomic.AtomicInteger lends = new java.util.concurrent.atomic.AtomicInteger();
        io.grpc.Channel counted = io.grpc.ClientInterceptors.intercept(channels.channel(node.address()),
                new io.grpc.ClientInterceptor() {
                    @Override
                    public <Q, A> io.grpc.ClientCall<Q, A> interceptCall(io.grpc.MethodDescriptor<Q, A> method,
                                                                         io.grpc.CallOptions options, io.grpc.Channel next) {
                        if (method.getFullMethodName().equals(DataGrpc.getLendMethod().getFullMethodName())) {
                            lends.incrementAndGet();
                        }
                        return next.newCall(method, options);
                    }
                });
        SameHost sameHost = new SameHost();
        try {
            for (int i = 0; i < 3; i++) {
                byte[] got = new byte[size + i];
                dev.croupier.futures.wire.PullRequest request = dev.croupier.futures.wire.PullRequest.newBuilder()
                        .setSession(0xABABL).setId(WireCodec.key(new ObjectId(0xABABL, i))).build();
                assertEquals(size + i, sameHost.copy(counted, node.address(), request,
                        total -> java.lang.foreign.MemorySegment.ofArray(got)), "object " + i);
                assertEquals(ValueFrame.MAGIC, got[0]);
                for (int b = 3; b < got.length; b += 4093) {
                    assertEquals((byte) b, got[b], "byte " + b + " of object " + i);
                }
                assertEquals((byte) (size + i - 1), got[size + i - 1]);
                assertEquals(1, lends.get(), "one Lend, for the first object: the others were listed");
            }
            dev.croupier.futures.wire.PullRequest absent = dev.croupier.futures.wire.PullRequest.newBuilder()
                    .setSession(0xABABL).setId(WireCodec.key(new ObjectId(0xABABL, 99))).build();
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> sameHost.copy(counted,
                    node.address(), absent, total -> java.lang.foreign.MemorySegment.ofArray(new byte[(int) total])));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
            assertEquals(2, lends.get(), "an object the directory does not list is asked for");
        } finally {
            sameHost.close();
        }
    }

    private static dev.croupier.futures.wire.PullRequest request(long session, long object) {
        return dev.croupier.futures.wire.PullRequest.newBuilder().setSession(session)
                .setId(WireCodec.key(new ObjectId(session, object))).build();
    }

    /**
     * A loan keeps its object where it lies until it ends: the session that owned the object
     * ends and another fills the store, and the borrowed bytes stay as they were; once the loan
     * ends, the holder frees them.
     */
    @Test
    void aLoanKeepsItsObjectWhereItLiesUntilItEnds() throws Exception {
        control().register(register(0xC1C1L, 200).build());
        StreamObserver<DriverMessage> leaving = openSession(0xC1C1L);
        int size = 6 << 20;
        put(0xC1C1L, new ObjectId(0xC1C1L, 1), size);
        SameHost sameHost = new SameHost();
        try {
            NodeStore.Reading loan = sameHost.borrow(channels.channel(node.address()), node.address(),
                    request(0xC1C1L, 1)).getFirst().await();
            assertNotNull(loan, "an object in the holder's memory is lent");
            java.lang.foreign.MemorySegment frame = loan.frame();
            assertEquals(size, frame.byteSize());
            leaving.onCompleted();
            while (stats().getSessionsCount() != 0) {
                Thread.sleep(20); // the lease (200 ms) runs out and the session's object is freed
            }
            assertEquals(1, stats().getObjects(), "a freed object stays in memory while it is lent");
            control().register(register(0xC2C2L, 600_000).build());
            for (int i = 0; i < 5; i++) { // 30 MiB more through a 32 MiB store
                put(0xC2C2L, new ObjectId(0xC2C2L, i), size, 101);
            }
            assertEquals(ValueFrame.MAGIC, frame.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
            for (int b = 3; b < size; b += 4093) {
                assertEquals((byte) b, frame.get(java.lang.foreign.ValueLayout.JAVA_BYTE, b), "byte " + b);
            }
            loan.close();
            while (stats().getObjects() != 5) {
                Thread.sleep(20); // the call's end reaches the holder, which unpins and frees
            }
        } finally {
            sameHost.close();
        }
    }

    /**
     * A task borrows all it reads from one holder on one call: each object comes back as its
     * own loan, in order, and they stay pinned until the last loan of the call ends; a call
     * naming an object the holder does not have lends none of them and pins nothing.
     */
    @Test
    void loansOfOneCallKeepTheirObjectsUntilTheLastEnds() throws Exception {
        control().register(register(0xB0B0L, 200).build());
        StreamObserver<DriverMessage> leaving = openSession(0xB0B0L);
        int size = 2 << 20;
        for (int i = 0; i < 3; i++) {
            put(0xB0B0L, new ObjectId(0xB0B0L, i), size, 10 * i);
        }
        SameHost sameHost = new SameHost();
        try {
            dev.croupier.futures.wire.PullRequest all = request(0xB0B0L, 0).toBuilder()
                    .addMore(WireCodec.key(new ObjectId(0xB0B0L, 1)))
                    .addMore(WireCodec.key(new ObjectId(0xB0B0L, 2))).build();
            List<SameHost.Loan> loans = sameHost.borrow(channels.channel(node.address()), node.address(), all);
            assertEquals(3, loans.size());
            for (int i = 0; i < 3; i++) {
                NodeStore.Reading loan = loans.get(i).await();
                assertNotNull(loan, "object " + i + " is lent");
                java.lang.foreign.MemorySegment frame = loan.frame();
                assertEquals(size, frame.byteSize());
                for (int b = 3; b < size; b += 4093) {
                    assertEquals((byte) (b + 10 * i), frame.get(java.lang.foreign.ValueLayout.JAVA_BYTE, b),
                            "byte " + b + " of object " + i);
                }
            }
            loans.get(0).close();
            loans.get(1).close();
            loans.get(1).close(); // again: nothing more
            leaving.onCompleted();
            while (stats().getSessionsCount() != 0) {
                Thread.sleep(20); // the lease (200 ms) runs out and the session's objects are freed
            }
            assertEquals(3, stats().getObjects(), "the call stays open, and all its objects pinned, while one loan lasts");
            loans.get(2).close();
            while (stats().getObjects() != 0) {
                Thread.sleep(20); // the call's end reaches the holder, which unpins and frees them all
            }

            control().register(register(0xB1B1L, 200).build());
            StreamObserver<DriverMessage> second = openSession(0xB1B1L);
            put(0xB1B1L, new ObjectId(0xB1B1L, 0), size);
            dev.croupier.futures.wire.PullRequest withAbsent = request(0xB1B1L, 0).toBuilder()
                    .addMore(WireCodec.key(new ObjectId(0xB1B1L, 9))).build();
            List<SameHost.Loan> refused = sameHost.borrow(channels.channel(node.address()), node.address(), withAbsent);
            assertNull(refused.get(0).await(), "a call naming an absent object lends none");
            assertNull(refused.get(1).await(), "nor the absent one");
            second.onCompleted();
            while (stats().getObjects() != 0) {
                Thread.sleep(20); // nothing stayed pinned: the session's end frees its object
            }
        } finally {
            sameHost.close();
        }
    }

    /** A spilled object leaves through its spill file: both paths read it there, and nothing is restored. */
    @Test
    void aSpilledObjectIsPulledFromItsSpillFileWithoutARestore() throws Exception {
        control().register(register(0xDDDDL, 600_000).build());
        int size = 9 << 20;
        for (int i = 0; i < 6; i++) { // 54 MiB through a 32 MiB store: the first ones spill
            put(0xDDDDL, new ObjectId(0xDDDDL, i), size);
        }
        StatsReply before = control().stats(StatsRequest.getDefaultInstance());
        assertTrue(before.getBytesSpilled() >= 2L * size, "objects spilled: " + before);
        SameHost lender = new SameHost();
        try {
            assertNull(lender.borrow(channels.channel(node.address()), node.address(), request(0xDDDDL, 0)).getFirst().await(),
                    "a spilled object is copied, not lent");
        } finally {
            lender.close();
        }
        String property = System.getProperty(SameHost.PROPERTY);
        try {
            for (String sameHost : new String[] {"true", "false"}) {
                System.setProperty(SameHost.PROPERTY, sameHost);
                try (PeerChannels puller = new PeerChannels(null, null, loops)) {
                    for (int i = 0; i < 6; i++) {
                        byte[] got = new byte[size];
                        assertEquals(size, puller.pull(node.address(), 0xDDDDL, new ObjectId(0xDDDDL, i),
                                total -> java.lang.foreign.MemorySegment.ofArray(got)), "object " + i);
                        assertEquals(ValueFrame.MAGIC, got[0]);
                        for (int b = 3; b < size; b += 4093) {
                            assertEquals((byte) b, got[b], "byte " + b + " of object " + i + ", same host " + sameHost);
                        }
                        assertEquals((byte) (size - 1), got[size - 1]);
                    }
                }
            }
        } finally {
            if (property == null) {
                System.clearProperty(SameHost.PROPERTY);
            } else {
                System.setProperty(SameHost.PROPERTY, property);
            }
        }
        assertEquals(before.getBytesRestored(), control().stats(StatsRequest.getDefaultInstance()).getBytesRestored(),
                "pulls of spilled objects restore nothing on the holder");
    }

    /**
     * Code a node holds with other bytes is refused; code it lacks is asked of the driver, once
     * per class, and its attempts wait: they fail naming the class when the driver cannot ship
     * it, when the jar shipped lacks it, or when the jar is over the node's bound.
     */
    @Test
    void anAttemptWhoseCodeDiffersOrCannotBeShippedIsRefusedNamingTheClass() throws Exception {
        control().register(register(0xDDDDL, 600_000).build());
        java.util.concurrent.LinkedBlockingQueue<dev.croupier.futures.wire.Outcome> outcomes =
                new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.concurrent.LinkedBlockingQueue<String> wanted = new java.util.concurrent.LinkedBlockingQueue<>();
        StreamObserver<DriverMessage> session = ControlGrpc.newStub(channels.channel(node.address()))
                .session(new StreamObserver<>() {
                    @Override
                    public void onNext(NodeMessage m) {
                        outcomes.addAll(m.getOutcomes().getOutcomesList());
                        if (m.hasCodeWanted()) {
                            wanted.add(m.getCodeWanted().getClassName());
                        }
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        dev.croupier.futures.wire.Attempt.Builder attempt = dev.croupier.futures.wire.Attempt.newBuilder()
                .setName("stale").setCpus(1).setFunction(ByteString.copyFrom(new byte[] {1}))
                .addOutputs(WireCodec.key(new ObjectId(0xDDDDL, 1)))
                .setCodeSha256(ByteString.copyFrom(new byte[32]));
        session.onNext(DriverMessage.newBuilder().setSession(0xDDDDL).setDispatch(
                dev.croupier.futures.wire.DispatchBatch.newBuilder()
                        .addAttempts(attempt.clone().setAttemptId(1).setCodeClass(NodeServiceTest.class.getName()))
                        .addAttempts(attempt.clone().setAttemptId(2).setCodeClass("com.example.Missing"))
                        .addAttempts(attempt.clone().setAttemptId(3).setCodeClass("com.example.Missing"))
                        .addAttempts(attempt.clone().setAttemptId(4).setCodeClass("com.example.Unshippable"))
                        .addAttempts(attempt.clone().setAttemptId(5).setCodeClass("com.example.Huge"))).build());
        java.util.Set<String> asked = new java.util.HashSet<>();
        for (int i = 0; i < 3; i++) {
            asked.add(wanted.poll(10, TimeUnit.SECONDS));
        }
        assertEquals(java.util.Set.of("com.example.Missing", "com.example.Unshippable", "com.example.Huge"), asked);
        java.io.ByteArrayOutputStream emptyJar = new java.io.ByteArrayOutputStream();
        new java.util.jar.JarOutputStream(emptyJar).close();
        shipCode(dev.croupier.futures.wire.CodePart.newBuilder().setSession(0xDDDDL).setClassName("com.example.Missing")
                .setTotal(emptyJar.size()).setData(ByteString.copyFrom(emptyJar.toByteArray())).build());
        shipCode(dev.croupier.futures.wire.CodePart.newBuilder().setSession(0xDDDDL)
                .setClassName("com.example.Unshippable").setRefusal("it was generated at run time").build());
        shipCode(dev.croupier.futures.wire.CodePart.newBuilder().setSession(0xDDDDL).setClassName("com.example.Huge")
                .setTotal(SessionClassLoader.MAX_JAR_BYTES + 1L).build());
        java.util.Map<Long, String> why = new java.util.HashMap<>();
        while (why.size() < 5) {
            dev.croupier.futures.wire.Outcome o = outcomes.poll(10, TimeUnit.SECONDS);
            assertTrue(o != null, "every attempt is answered; answered so far: " + why);
            assertEquals(dev.croupier.futures.wire.Outcome.Kind.FAILED, o.getKind());
            why.put(o.getAttemptId(), o.getError().getMessage());
        }
        assertTrue(why.get(1L).contains("different bytes for class " + NodeServiceTest.class.getName()), why.get(1L));
        for (long a : new long[] {2, 3}) {
            assertTrue(why.get(a).contains("class com.example.Missing is neither on the class path of node")
                    && why.get(a).contains("nor in the jar the driver shipped"), why.get(a));
        }
        assertTrue(why.get(4L).contains("lacks class com.example.Unshippable and the driver could not ship it: it was"
                + " generated at run time"), why.get(4L));
        assertTrue(why.get(5L).contains("com.example.Huge") && why.get(5L).contains("at most 256 MiB"), why.get(5L));
        assertEquals(null, wanted.poll(), "each class is asked for once");
        session.onCompleted();
    }

    private void shipCode(dev.croupier.futures.wire.CodePart part) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        StreamObserver<dev.croupier.futures.wire.CodePart> out = ControlGrpc.newStub(channels.channel(node.address()))
                .shipCode(new StreamObserver<>() {
                    @Override
                    public void onNext(dev.croupier.futures.wire.CodeReply reply) {}

                    @Override
                    public void onError(Throwable t) {
                        done.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        done.countDown();
                    }
                });
        out.onNext(part);
        out.onCompleted();
        assertTrue(done.await(10, TimeUnit.SECONDS));
    }

    private StatsReply stats() {
        return control().stats(StatsRequest.getDefaultInstance());
    }

    private StreamObserver<DriverMessage> openSession(long session) {
        StreamObserver<DriverMessage> out = ControlGrpc.newStub(channels.channel(node.address()))
                .session(new StreamObserver<>() {
                    @Override
                    public void onNext(NodeMessage m) {}

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        out.onNext(DriverMessage.newBuilder().setSession(session).setHeartbeat(true).build());
        return out;
    }

    private void put(long session, ObjectId id, int bytes) throws InterruptedException {
        put(session, id, bytes, 0);
    }

    /** Puts a frame of {@code bytes} whose byte {@code i} past the header is {@code i + seed}. */
    private void put(long session, ObjectId id, int bytes, int seed) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        StreamObserver<Chunk> out = DataGrpc.newStub(channels.channel(node.address())).put(new StreamObserver<>() {
            @Override
            public void onNext(PutReply reply) {}

            @Override
            public void onError(Throwable t) {
                done.countDown();
            }

            @Override
            public void onCompleted() {
                done.countDown();
            }
        });
        byte[] frame = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            frame[i] = (byte) (i + seed);
        }
        frame[0] = ValueFrame.MAGIC;
        frame[1] = ValueFrame.VERSION;
        frame[2] = ValueFrame.BYTES;
        for (int offset = 0; offset < bytes; offset += NodeService.CHUNK_BYTES) {
            Chunk.Builder c = Chunk.newBuilder().setData(ByteString.copyFrom(frame, offset,
                    Math.min(NodeService.CHUNK_BYTES, bytes - offset)));
            if (offset == 0) {
                c.setId(WireCodec.key(id)).setTotal(bytes).setSession(session);
            }
            out.onNext(c.build());
        }
        out.onCompleted();
        assertTrue(done.await(10, TimeUnit.SECONDS));
    }

    /**
     * Closing a node ends the event loop threads under its server and its channels to other
     * nodes: a JVM that exits while a thread waits in {@code epoll_wait} waits 300 ms for it.
     */
    @Test
    void closeEndsTheNodesEventLoopThreads() throws Exception {
        control().register(register(0xEEEEL, 600_000).build());
        List<Thread> loops = EventLoopThreads.live("croupier-node-io");
        assertFalse(loops.isEmpty(), "the node's server runs on its own loops");
        node.close();
        EventLoopThreads.assertEnded(loops);
    }

    /** A spill folder that cannot hold the node's files is refused as bad input, naming the folder and why. */
    @Test
    void aSpillFolderThatCannotHoldFilesIsNamed() throws Exception {
        Path notAFolder = java.nio.file.Files.createFile(spill.resolve("a-file"));
        dev.croupier.futures.CroupierException e = assertThrows(dev.croupier.futures.CroupierException.class,
                () -> new NodeService("127.0.0.1", 0, 1, 32L << 20, 1024, null, notAFolder, null, null, null, null));
        assertEquals(dev.croupier.futures.ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().startsWith("spill folder " + notAFolder + " cannot hold"), e.getMessage());
    }
}
