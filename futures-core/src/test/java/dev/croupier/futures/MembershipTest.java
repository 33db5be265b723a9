package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.internal.ClusterConfig;
import dev.croupier.futures.internal.OwnerCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A driver that connects by address resolves its names again while it runs: a node restarted by
 * hand on the same port serves the driver's next job, a name that comes to resolve to another
 * address adds that node in the middle of a job, and an address that leaves the name is a lost
 * node whose work is done elsewhere. The nodes are processes started as a user starts them.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MembershipTest {

    @TempDir
    Path spill;

    private final List<Process> nodes = new ArrayList<>();

    @AfterEach
    void stopNodes() throws InterruptedException {
        // SIGTERM: a node closes its store, so nothing stays in /dev/shm
        nodes.forEach(Process::destroy);
        for (Process p : nodes) {
            if (!p.waitFor(15, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /** Starts {@code croupier node --port port} and returns its address once it serves. */
    private String startNode(int port) throws IOException {
        Process p = new ProcessBuilder(ProcessClusterTest.javaCommand("--port", Integer.toString(port), "--cpus", "2",
                "--store-memory", "32m", "--spill-dir", spill.toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        nodes.add(p);
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertTrue(line != null && line.startsWith(NodeServer.READY), String.valueOf(line));
        return line.substring(NodeServer.READY.length()).trim();
    }

    /** Waits (bounded by the test's timeout) until the driver sees what {@code seen} asks. */
    private static void awaitView(BooleanSupplier seen) throws InterruptedException {
        while (!seen.getAsBoolean()) {
            Thread.sleep(20);
        }
    }

    private static long pidOf(Cluster c, int node) {
        return c.task(() -> ProcessHandle.current().pid()).onNode(node, Affinity.HARD).remote().get();
    }

    @Test
    void aNodeRestartedByHandOnTheSamePortServesTheDriversNextJob() throws Exception {
        String first = startNode(0);
        String second = startNode(0);
        int port = Integer.parseInt(second.substring(second.lastIndexOf(':') + 1));
        try (Cluster c = Cluster.builder().connect(first, second).resolveEvery(Duration.ofMillis(200)).start()) {
            ProcessClusterTest.assertDagAnswers(c, RandomDagProperties.Dag.random(60, 3));
            Process old = nodes.get(1);
            old.destroyForcibly(); // kill -9
            old.onExit().join();
            awaitView(() -> c.aliveNodes().equals(List.of(0)));
            String again = startNode(port);
            assertEquals(second, again, "the same port");
            awaitView(() -> c.aliveNodes().equals(List.of(0, 1)));
            assertEquals(nodes.get(2).pid(), pidOf(c, 1), "node 1 is the new process");
            ProcessClusterTest.assertDagAnswers(c, RandomDagProperties.Dag.random(80, 4));
            ClusterStats.Failures failures = c.stats().failures();
            assertEquals(1, failures.nodesLost(), failures.toString());
        }
    }

    @Test
    void addressesThatJoinAndLeaveTheNameMidJobAddAndLoseNodes() throws Exception {
        String a = startNode(0);
        String b = startNode(0);
        String later = startNode(0);
        AtomicReference<List<String>> resolvesTo = new AtomicReference<>(List.of(a, b));
        ClusterConfig config = Cluster.builder().connect("nodes.test:7000").resolveEvery(Duration.ofMillis(200))
                .conclude().withResolver(names -> resolvesTo.get());
        try (Cluster c = OwnerCluster.start(config)) {
            assertEquals(List.of(0, 1), c.aliveNodes());
            RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(150, 17);
            long[][] expected = dag.evaluate();
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < dag.tasks.size(); i++) {
                refs.add(RandomDagProperties.submit(c, dag, refs, i));
                if (i == 75) {
                    resolvesTo.set(List.of(a, later)); // b leaves the name, later joins it
                }
            }
            for (int i = 0; i < dag.tasks.size(); i++) {
                for (int j = 0; j < expected[i].length; j++) {
                    assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()), "task " + i);
                }
            }
            awaitView(() -> c.aliveNodes().equals(List.of(0, 2)));
            assertEquals(nodes.get(2).pid(), pidOf(c, 2), "the joined address is node 2");
            assertEquals(1, c.stats().failures().nodesLost(), "the address that left is a lost node");
            assertTrue(nodes.get(1).isAlive(), "a node that left the name is not killed: it was never ours");
        }
    }
}
