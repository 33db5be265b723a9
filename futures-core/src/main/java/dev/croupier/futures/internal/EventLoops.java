package dev.croupier.futures.internal;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The Netty event loops under one node's or one driver's gRPC server and channels, owned by it
 * instead of gRPC's process-wide shared ones, so that their threads end when it closes.
 *
 * <p>Design note: when a JVM exits while one of its threads is blocked in native code, as an
 * event loop is in {@code epoll_wait}, HotSpot waits up to 300 ms for that thread before it
 * exits ({@code VM_Exit::wait_for_threads_in_native_to_block}); gRPC keeps its shared loops
 * running for a second after their last server or channel shuts down. So every node process
 * that stopped, and every driver process that ended after using node processes, spent 0.3 s
 * doing nothing. Epoll where the platform has it (as gRPC's own default), else NIO; as many
 * threads as Netty's default (twice the cores), as daemons.
 *
 * <p>Loading this class turns off the Flight Recorder events of gRPC's shaded Netty
 * ({@value #NETTY_JFR}), unless the JVM's properties already say otherwise; see
 * {@link #quietFlightRecorder}. Thread-safe.
 */
final class EventLoops implements AutoCloseable {

    /** The property gRPC's shaded copy of Netty reads, once, for whether to emit Flight Recorder events. */
    static final String NETTY_JFR = "io.grpc.netty.shaded.io.netty.jfr.enabled";

    static {
        quietFlightRecorder(System.getProperties());
    }

    /**
     * Sets {@value #NETTY_JFR} to false in {@code properties} unless it is set. Netty's pooled
     * allocator announces each chunk it allocates as a Flight Recorder event, and the event
     * class's first use registers it with the recorder, which builds the recorder's whole type
     * library, annotations and generated classes, in the interpreter, on the event loop of the
     * first connection, whether or not anything records (docs/benchmarks.md, "The Flight
     * Recorder, started for nothing"). Every class that uses Netty builds on these loops, so
     * this runs before Netty reads the property. A user who wants the events sets it to true.
     */
    static void quietFlightRecorder(java.util.Properties properties) {
        properties.putIfAbsent(NETTY_JFR, "false");
    }

    /** Longest {@link #close} waits for the loops' threads to end. */
    private static final long CLOSE_WAIT_MILLIS = 5_000;

    private final EventLoopGroup group;
    private final boolean epoll = Epoll.isAvailable();

    /** Starts no thread yet: a loop's thread starts with its first channel. */
    EventLoops(String threadName) {
        this.group = new MultiThreadIoEventLoopGroup(0, new DefaultThreadFactory(threadName, true),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    /** {@code server}, set to accept and serve its connections on these loops. */
    NettyServerBuilder serve(NettyServerBuilder server) {
        Class<? extends ServerChannel> type = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        return server.bossEventLoopGroup(group).workerEventLoopGroup(group).channelType(type);
    }

    /** {@code channel}, set to run its connection on these loops. */
    NettyChannelBuilder connect(NettyChannelBuilder channel) {
        Class<? extends Channel> type = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        return channel.eventLoopGroup(group).channelType(type);
    }

    /**
     * Ends the loops at once (no quiet period) and waits, bounded, for their threads to end;
     * call after the servers and channels on them are shut down.
     */
    @Override
    public void close() {
        group.shutdownGracefully(0, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(CLOSE_WAIT_MILLIS);
    }
}
