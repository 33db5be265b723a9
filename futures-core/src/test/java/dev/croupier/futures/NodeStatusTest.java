package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link NodeStatus#query} against a node served in this JVM: its store, its sessions, and the refusals. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeStatusTest {

    @TempDir
    Path spill;

    @Test
    void aNodeReportsItsStoreAndEachDriverSession() {
        try (NodeServer node = NodeServer.builder().cpus(1).objectStoreBytes(8L << 20).spillDirectory(spill).start()) {
            NodeStatus idle = NodeStatus.query(node.address());
            assertEquals(node.address(), idle.address());
            assertEquals(8L << 20, idle.storeCapacityBytes());
            assertEquals(0, idle.driverSessions());
            assertEquals(0, idle.tasksRunning() + idle.tasksQueued());
            try (Cluster c = Cluster.connect(node.address())) {
                ObjectRef<byte[]> held = c.put(new byte[1 << 20]);
                assertEquals(1 << 20, held.get().length);
                NodeStatus busy = NodeStatus.query(node.address());
                assertEquals(1, busy.driverSessions());
                assertTrue(busy.storeUsedBytes() >= 1 << 20, busy.toString());
            }
        }
    }

    @Test
    void noNodeThereIsUnavailableNamingTheAddress() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        CroupierException e = assertThrows(CroupierException.class, () -> NodeStatus.query("127.0.0.1:" + port));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
    }

    @Test
    void anAddressWithoutAPortIsBadInput() {
        for (String bad : new String[] {"localhost", "localhost:http", ":7000", "localhost:70000"}) {
            CroupierException e = assertThrows(CroupierException.class, () -> NodeStatus.query(bad));
            assertEquals(ErrorCode.BAD_INPUT, e.code());
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
    }
}
