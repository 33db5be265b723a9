package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A network partition: three node processes, each in its own network namespace with its own
 * address, the driver in this one. One node's link is cut in the middle of a job: the job still
 * gives the sequential answer (the node misses its heartbeats, its work is done elsewhere).
 * The link comes back: the driver, resolving its addresses again, registers the node as a new
 * incarnation and it serves the next job. Where namespaces cannot be made (not root, no
 * iproute2) the test says why and is skipped.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PartitionTest {

    @TempDir
    Path dir;

    @Test
    void aNodeCutOffMidJobLosesNothingAndServesAgainWhenItsLinkReturns() throws Exception {
        String why = NetworkNamespaces.unavailable();
        if (why != null) {
            System.out.println("PartitionTest skipped: " + why);
        }
        Assumptions.assumeTrue(why == null, why);
        Path token = Files.writeString(dir.resolve("token"), "partition-test-token");
        List<Process> nodes = new ArrayList<>();
        try (NetworkNamespaces net = new NetworkNamespaces()) {
            try {
                List<String> addresses = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    String ip = net.addHost();
                    Process p = new ProcessBuilder(net.inside(k, ProcessClusterTest.javaCommand("--bind", ip,
                            "--port", "7000", "--cpus", "2", "--store-memory", "32m", "--spill-dir", dir.toString(),
                            "--token-file", token.toString())))
                            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                    nodes.add(p);
                    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                            .readLine();
                    assertTrue(line != null && line.startsWith(NodeServer.READY), String.valueOf(line));
                    addresses.add(line.substring(NodeServer.READY.length()).trim());
                }
                try (Cluster c = Cluster.builder().connect(addresses.toArray(String[]::new)).tokenFile(token)
                        .heartbeatTimeout(Duration.ofSeconds(1)).resolveEvery(Duration.ofMillis(200)).start()) {
                    assertEquals(List.of(0, 1, 2), c.aliveNodes());
                    RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(150, 29);
                    long[][] expected = dag.evaluate();
                    List<List<ObjectRef<Object>>> refs = new ArrayList<>();
                    for (int i = 0; i < dag.tasks.size(); i++) {
                        refs.add(RandomDagProperties.submit(c, dag, refs, i));
                        if (i == 75) {
                            net.setLink(1, false); // node 1 is cut off from the driver and the other nodes
                        }
                    }
                    for (int i = 0; i < dag.tasks.size(); i++) {
                        for (int j = 0; j < expected[i].length; j++) {
                            assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()),
                                    "task " + i);
                        }
                    }
                    refs.forEach(r -> r.forEach(ObjectRef::release));
                    while (c.aliveNodes().contains(1)) {
                        Thread.sleep(20); // it misses its heartbeats within a second; the timeout bounds this
                    }
                    assertTrue(nodes.get(1).isAlive(), "cut off, not dead");
                    net.setLink(1, true);
                    while (!c.aliveNodes().equals(List.of(0, 1, 2))) {
                        Thread.sleep(20); // the next resolution finds it answering again
                    }
                    assertEquals(nodes.get(1).pid(),
                            c.task(() -> ProcessHandle.current().pid()).onNode(1, Affinity.HARD).remote().get(),
                            "the node that was cut off serves again");
                    ProcessClusterTest.assertDagAnswers(c, RandomDagProperties.Dag.random(100, 31));
                    assertTrue(c.stats().failures().nodesLost() >= 1, c.stats().failures().toString());
                }
            } finally {
                // SIGTERM: a node closes its store, so nothing stays in /dev/shm
                nodes.forEach(Process::destroy);
                for (Process p : nodes) {
                    if (!p.waitFor(15, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                }
            }
        }
    }
}
