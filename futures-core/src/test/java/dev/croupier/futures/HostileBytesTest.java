package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stranger's bytes on a node's port: random bytes, an HTTP/1.1 request, and gRPC calls whose
 * messages are not the protobuf they claim to be. The node refuses each and then serves a
 * driver's job as if nothing had happened.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileBytesTest {

    @TempDir
    Path spill;

    private static final MethodDescriptor.Marshaller<byte[]> RAW = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    };

    @Test
    void aNodeSurvivesGarbageHttpAndMalformedProtobufAndServesTheNextJob() throws Exception {
        try (NodeServer node = NodeServer.builder().cpus(2).objectStoreBytes(16L << 20).spillDirectory(spill).start()) {
            int colon = node.address().lastIndexOf(':');
            InetSocketAddress at = new InetSocketAddress(node.address().substring(0, colon),
                    Integer.parseInt(node.address().substring(colon + 1)));
            Random random = new Random(42);
            for (int i = 0; i < 20; i++) {
                byte[] garbage = new byte[1 + random.nextInt(70_000)];
                random.nextBytes(garbage);
                send(at, garbage);
            }
            send(at, "GET / HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            send(at, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0".getBytes(StandardCharsets.ISO_8859_1));

            ManagedChannel channel = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                for (String method : new String[] {"croupier.v1.Control/Register", "croupier.v1.Data/Pull",
                        "croupier.v1.Control/Stats", "croupier.v1.Nothing/Here"}) {
                    MethodDescriptor<byte[], byte[]> raw = MethodDescriptor.<byte[], byte[]>newBuilder()
                            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(method)
                            .setRequestMarshaller(RAW).setResponseMarshaller(RAW).build();
                    byte[] notProtobuf = new byte[512];
                    random.nextBytes(notProtobuf);
                    notProtobuf[0] = (byte) 0xFF; // an invalid tag
                    assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(channel, raw,
                            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), notProtobuf), method);
                }
            } finally {
                channel.shutdownNow();
            }

            try (Cluster c = Cluster.connect(node.address())) {
                ProcessClusterTest.assertDagAnswers(c, RandomDagProperties.Dag.random(80, 5));
                assertEquals(0, c.objectCount());
            }
        }
    }

    private static void send(InetSocketAddress at, byte[] bytes) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(at, 5_000);
            s.setSoTimeout(5_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(bytes);
                out.flush();
                s.getInputStream().read(new byte[4096]); // whatever the node answers, or its close
            } catch (java.io.IOException closedByTheNode) {
                // a refusal is what we expect
            }
        }
    }
}
