package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes with a token refuse drivers without it or with another, naming the node; a driver with
 * it runs tasks whose arguments the nodes pull from each other with it; and a node refuses to
 * bind an address other hosts can reach without one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TokenTest {

    @TempDir
    Path dir;

    private NodeServer node(Path token) {
        return NodeServer.builder().cpus(1).objectStoreBytes(32L << 20).spillDirectory(dir).tokenFile(token).start();
    }

    @Test
    void aDriverWithoutTheTokenOrWithAnotherIsRefusedNamingTheNode() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cret-token\n");
        Path other = Files.writeString(dir.resolve("other"), "another-token");
        java.util.logging.Logger log = java.util.logging.Logger.getLogger("dev.croupier.futures.internal.CallToken");
        List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                logged.add(r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        log.addHandler(capture);
        try (NodeServer n = node(token)) {
            CroupierException none = assertThrows(CroupierException.class, () -> Cluster.connect(n.address()));
            assertEquals(ErrorCode.UNAVAILABLE, none.code());
            assertTrue(none.getMessage().contains(n.address()) && none.getMessage().contains("no token"),
                    none.getMessage());
            CroupierException wrong = assertThrows(CroupierException.class,
                    () -> Cluster.builder().connect(n.address()).tokenFile(other).start());
            assertTrue(wrong.getMessage().contains("token is not this node's"), wrong.getMessage());
            assertTrue(logged.stream().anyMatch(m -> m.contains("refused") && m.contains("from /127.0.0.1:")
                    && m.contains("no token")), "the node logs the refused caller's address: " + logged);
            assertTrue(logged.stream().anyMatch(m -> m.contains("from /127.0.0.1:") && m.contains("wrong token")),
                    String.valueOf(logged));
        } finally {
            log.removeHandler(capture);
        }
    }

    @Test
    void nodesPullFromEachOtherWithTheToken() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cret-token");
        try (NodeServer a = TestClusters.pullingOverTheStream(() -> node(token));
             NodeServer b = TestClusters.pullingOverTheStream(() -> node(token));
             Cluster c = Cluster.builder().connect(a.address(), b.address()).tokenFile(token).start()) {
            ObjectRef<MemorySegment> made = c.task((Long n) -> {
                MemorySegment out = TaskOutput.allocate(n);
                out.fill((byte) 3);
                return out;
            }, 3L << 20).onNode(0, Affinity.HARD).remote();
            long sum = c.task((MemorySegment s) -> s.byteSize() + s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0),
                    made).onNode(1, Affinity.HARD).remote().get();
            assertEquals((3L << 20) + 3, sum);
            assertEquals(3L << 20, c.stats().nodes().get(1).bytesFetched() - 8);
        }
    }

    @Test
    void aNodeWithoutATokenBindsOnlyLoopback() {
        CroupierException e = assertThrows(CroupierException.class,
                () -> NodeServer.builder().bind("0.0.0.0").spillDirectory(dir).start());
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains("0.0.0.0") && e.getMessage().contains("needs a token"), e.getMessage());
    }
}
