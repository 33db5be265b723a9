package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes serving TLS with a certificate a test CA signed: a driver trusting the CA runs tasks
 * whose arguments the nodes pull from each other over TLS; a plaintext driver is refused,
 * naming the node. The certificates are made with the openssl command.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsTest {

    @TempDir
    Path dir;

    @BeforeEach
    void certificates() throws Exception {
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                "-days", "1", "-subj", "/CN=croupier-test-ca");
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
                "-subj", "/CN=127.0.0.1");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        run("openssl", "x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "node.pem", "-days", "1", "-extfile", "san.ext");
    }

    private void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
    }

    private NodeServer node() {
        return NodeServer.builder().cpus(1).objectStoreBytes(32L << 20).spillDirectory(dir)
                .tls(dir.resolve("node.pem"), dir.resolve("node.key"), dir.resolve("ca.pem")).start();
    }

    @Test
    void aDriverTrustingTheAuthorityRunsTasksAndNodesPullOverTls() {
        try (NodeServer a = TestClusters.pullingOverTheStream(this::node);
             NodeServer b = TestClusters.pullingOverTheStream(this::node);
             Cluster c = Cluster.builder().connect(a.address(), b.address()).tlsAuthority(dir.resolve("ca.pem"))
                     .start()) {
            assertEquals(List.of(0, 1), c.aliveNodes());
            ObjectRef<MemorySegment> made = c.task((Long n) -> {
                MemorySegment out = TaskOutput.allocate(n);
                out.fill((byte) 9);
                return out;
            }, 2L << 20).onNode(0, Affinity.HARD).remote();
            long read = c.task((MemorySegment s) -> s.byteSize() + s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 7),
                    made).onNode(1, Affinity.HARD).remote().get();
            assertEquals((2L << 20) + 9, read);
            assertEquals(2L << 20, c.stats().nodes().get(1).bytesFetched() - 8);
        }
    }

    @Test
    void aPlaintextDriverIsRefusedNamingTheNode() {
        try (NodeServer a = node()) {
            CroupierException e = assertThrows(CroupierException.class, () -> Cluster.connect(a.address()));
            assertEquals(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().contains(a.address()), e.getMessage());
        }
    }
}
