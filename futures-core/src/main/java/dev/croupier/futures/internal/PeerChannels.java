package dev.croupier.futures.internal;

import dev.croupier.futures.wire.PullRequest;
import dev.croupier.objectstore.ObjectId;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * gRPC channels to other nodes, one per address, and the pulling side of the data service:
 * a frame arrives as a stream of chunks, each copied from the transport's buffers straight
 * into memory the caller chose (a store's object, or the driver's heap) as it arrives
 * ({@link ChunkFrame}), so the frame is never assembled twice.
 *
 * <p>A pull has a deadline that grows with the object ({@link #deadlineMillis}), so a holder
 * that stops answering fails the pull instead of hanging it. Thread-safe.
 */
final class PeerChannels implements AutoCloseable {

    /** Slowest transfer rate a pull tolerates before its deadline passes: 8 MiB/s. */
    private static final long MIN_BYTES_PER_SECOND = 8L << 20;
    /** Deadline of a pull of an object of unknown size, and the least of any pull. */
    private static final long BASE_DEADLINE_MILLIS = 30_000;

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    /** Carried by every call; null where the nodes take calls without one. */
    private final CallToken token;
    /** How channels encrypt; null for plaintext. */
    private final io.grpc.netty.shaded.io.netty.handler.ssl.SslContext tls;
    private final SameHost sameHost = new SameHost();
    /** Where the channels' connections run; its owner closes it after this. */
    private final EventLoops loops;

    PeerChannels(CallToken token, TlsFiles tls, EventLoops loops) {
        this.token = token;
        this.tls = tls == null ? null : tls.client();
        this.loops = loops;
    }

    ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> {
            int colon = a.lastIndexOf(':');
            NettyChannelBuilder b = loops.connect(NettyChannelBuilder.forAddress(a.substring(0, colon),
                    Integer.parseInt(a.substring(colon + 1))));
            if (token != null) {
                b.intercept(token.client());
            }
            if (tls != null) {
                b.sslContext(tls);
            } else {
                b.usePlaintext();
            }
            return b
                    .maxInboundMessageSize(NodeService.MAX_INBOUND_BYTES)
                    .flowControlWindow(NodeService.FLOW_CONTROL_WINDOW)
                    .build();
        });
    }

    static long deadlineMillis(long bytes) {
        return BASE_DEADLINE_MILLIS + bytes * 1000 / MIN_BYTES_PER_SECOND;
    }

    /** Where a pulled frame goes: memory for {@code size} bytes, or null if it is not wanted. */
    interface Sink {
        MemorySegment open(long size) throws InterruptedException;
    }

    /**
     * Pulls object {@code id} of session {@code session} from {@code address} into a node's
     * store. Returns the bytes copied, or -1 if the holder does not have it or cannot be reached.
     */
    long pull(String address, long session, ObjectId id, NodeStore into) throws InterruptedException {
        NodeStore.Incoming[] incoming = new NodeStore.Incoming[1];
        long bytes;
        try {
            bytes = pull(address, session, id, size -> {
                if (incoming[0] != null) {
                    incoming[0].abort(); // the same-host copy failed after taking memory; the stream retries
                }
                incoming[0] = into.receive(id, size);
                return incoming[0] == null ? null : incoming[0].frame();
            });
        } catch (RuntimeException e) {
            if (incoming[0] != null) {
                incoming[0].abort();
            }
            throw e;
        }
        if (bytes >= 0 && incoming[0] != null) {
            incoming[0].commit();
        } else if (incoming[0] != null) {
            incoming[0].abort();
        }
        return bytes;
    }

    /**
     * Pulls a frame into what {@code sink} gives: out of the holder's file if it runs on this
     * host ({@link SameHost}), else over the stream. Returns its size (also when the sink
     * wanted none of it), or -1 if the holder does not have it, is gone, or does not answer in
     * time. The sink may be asked twice if the same-host copy fails midway.
     */
    long pull(String address, long session, ObjectId id, Sink sink) throws InterruptedException {
        PullRequest request = request(session, id);
        try {
            long copied = sameHost.copy(channel(address), address, request, sink);
            if (copied >= 0) {
                return copied;
            }
        } catch (StatusRuntimeException notFound) {
            return -1;
        }
        MemorySegment target = null;
        long total = -1;
        long filled = 0;
        // Cancelled on the way out, so an abandoned stream releases its transport buffers.
        Context.CancellableContext scope = Context.current().withCancellation();
        Context previous = scope.attach();
        try {
            Iterator<ChunkFrame> chunks = ClientCalls.blockingServerStreamingCall(channel(address),
                    ChunkFrame.PULL, CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis(0), TimeUnit.MILLISECONDS),
                    request);
            while (chunks.hasNext()) {
                try (ChunkFrame c = chunks.next()) {
                    if (total < 0) {
                        total = c.total();
                        if (total < 0) {
                            throw new IllegalStateException("node " + address + " sent object " + id + " without its size");
                        }
                        target = sink.open(total);
                    }
                    if (filled + c.dataBytes() > total) {
                        throw new IllegalStateException("node " + address + " sent more than the " + total
                                + " bytes of object " + id);
                    }
                    c.copyTo(target, filled);
                    filled += c.dataBytes();
                }
            }
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.CANCELLED && Thread.interrupted()) {
                throw new InterruptedException("pull of " + id + " from " + address + " interrupted");
            }
            return -1;
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new IllegalStateException("node " + address + " sent a malformed chunk of object " + id + ": "
                    + e.getMessage(), e);
        } finally {
            scope.detach(previous);
            scope.cancel(null);
        }
        return filled == total ? total : -1;
    }

    /**
     * Starts borrowing objects {@code ids} of session {@code session} from the holder at
     * {@code address}, to be read in place, on one call ({@link SameHost#borrow}): a loan per
     * id, in order; null where the holder is known to run on another host.
     */
    List<SameHost.Loan> borrow(String address, long session, List<ObjectId> ids) {
        PullRequest.Builder request = requestOf(session, ids.getFirst());
        for (int i = 1; i < ids.size(); i++) {
            request.addMore(WireCodec.key(ids.get(i)));
        }
        return sameHost.borrow(channel(address), address, request.build());
    }

    /** Whether objects of the holder at {@code address} may be borrowed: it is not known to run on another host. */
    boolean mayLend(String address) {
        return sameHost.mayLend(address);
    }

    private static PullRequest request(long session, ObjectId id) {
        return requestOf(session, id).build();
    }

    private static PullRequest.Builder requestOf(long session, ObjectId id) {
        return PullRequest.newBuilder()
                .setProtocolVersion(NodeService.PROTOCOL_VERSION)
                .setSession(session)
                .setId(WireCodec.key(id));
    }

    @Override
    public void close() {
        sameHost.close();
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        channels.clear();
    }
}
