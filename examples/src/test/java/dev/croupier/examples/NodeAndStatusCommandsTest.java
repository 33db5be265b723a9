package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.NodeServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code croupier node} as a real process, as {@code bin/croupier} runs it, and {@code croupier
 * status} and a driver against such nodes. The nodes' logs go to the test's output; every node
 * started is killed after each test.
 */
@Timeout(180)
class NodeAndStatusCommandsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path spill;

    private final List<Process> nodes = new ArrayList<>();

    /** {@code croupier node args} as a process of this test's JVM, class path and flags. */
    private static List<String> nodeCommand(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), CroupierCli.class.getName(), "node"));
        command.addAll(List.of(args));
        return command;
    }

    /** Starts {@code croupier node} with {@code args} and returns its address once it serves. */
    private String startNode(String... args) throws Exception {
        Process p = new ProcessBuilder(nodeCommand(args)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        nodes.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        // bounded: a node that never gets ready is killed, which ends the read
        String line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        }).get(60, TimeUnit.SECONDS);
        assertTrue(line != null && line.startsWith(NodeServer.READY), "first line of the node: " + line);
        return line.substring(NodeServer.READY.length()).trim();
    }

    @AfterEach
    void killNodes() throws InterruptedException {
        for (Process p : nodes) {
            p.destroy();
        }
        for (Process p : nodes) {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void statusListsEveryNodeAndADriverRunsOnThem() throws Exception {
        String a = startNode("--port", "0", "--cpus", "1", "--store-memory", "24m", "--spill-dir", spill.toString());
        String b = startNode("--port=0", "--cpus=1", "--store-memory=32MiB", "--spill-dir", spill.toString(),
                "--classpath", spill.toString());
        String cluster = a + "," + b;

        ClusterOptionsTest.Run text = ClusterOptionsTest.cli("status", "--cluster", cluster);
        assertEquals(0, text.code(), text.err());
        List<String> lines = text.out().lines().toList();
        assertEquals(3, lines.size(), text.out());
        assertTrue(lines.get(1).startsWith(a + " ") && lines.get(2).startsWith(b + " "), text.out());

        ClusterOptionsTest.Run json = ClusterOptionsTest.cli("status", "--cluster", cluster, "--json");
        assertEquals(0, json.code(), json.err());
        JsonNode report = JSON.readTree(json.out());
        assertEquals(0, report.get("unreachable").size());
        JsonNode rows = report.get("nodes");
        assertEquals(2, rows.size());
        assertEquals(a, rows.get(0).get("address").asText());
        assertEquals(b, rows.get(1).get("address").asText());
        assertEquals(24L << 20, rows.get(0).get("store_capacity_bytes").asLong());
        assertEquals(32L << 20, rows.get(1).get("store_capacity_bytes").asLong());
        for (JsonNode row : rows) {
            for (String key : List.of("store_used_bytes", "spilled_bytes", "tasks_running", "tasks_queued",
                    "driver_sessions")) {
                assertTrue(row.get(key).canConvertToLong(), key + " in " + row);
            }
            assertEquals(0, row.get("driver_sessions").asInt(), "no driver yet: " + row);
        }

        ClusterOptionsTest.Run demo = ClusterOptionsTest.cli("demo", "--cluster", cluster, "--tasks", "200",
                "--samples", "1000", "--json");
        assertEquals(0, demo.code(), demo.err());
        JsonNode result = JSON.readTree(demo.out());
        assertEquals(2, result.get("nodes").asInt());
        assertEquals(Math.PI, result.get("pi").asDouble(), 0.1);
        assertTrue(result.get("noop_tasks_per_s").asDouble() > 0, demo.out());
    }

    @Test
    void statusCountsTheDriversConnected() throws Exception {
        String a = startNode("--port", "0", "--cpus", "1", "--store-memory", "16m", "--spill-dir", spill.toString());
        try (Cluster first = Cluster.connect(a); Cluster second = Cluster.connect(a)) {
            assertEquals(3, first.task(() -> 3).remote().get());
            assertEquals(4, second.task(() -> 4).remote().get());
            JsonNode row = JSON.readTree(ClusterOptionsTest.cli("status", "--cluster", a, "--json").out()).get("nodes").get(0);
            assertEquals(2, row.get("driver_sessions").asInt(), row.toString());
        }
    }

    /**
     * A node given {@code --parent PID} stops, exiting 0, once that process ends, as one that
     * bin/croupier starts while recording its start-up cache stops when the launcher is killed.
     */
    @Test
    void aNodeEndsWithTheProcessItWasGivenAsParent() throws Exception {
        Process parent = new ProcessBuilder("sleep", "600").start();
        try {
            startNode("--port", "0", "--cpus", "1", "--store-memory", "16m", "--spill-dir", spill.toString(),
                    "--parent", Long.toString(parent.pid()));
            Process node = nodes.getLast();
            assertTrue(node.isAlive(), "the node serves while its parent runs");
            parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertTrue(node.waitFor(60, TimeUnit.SECONDS), "the node should have stopped with its parent");
            assertEquals(0, node.exitValue());
        } finally {
            parent.destroyForcibly();
        }
    }

    /** Runs {@code croupier node args}, which must refuse to start, exiting {@code exitCode} with {@code line} alone. */
    private void assertRefused(int exitCode, String line, String... args) throws Exception {
        Process p = new ProcessBuilder(nodeCommand(args)).redirectErrorStream(true).start();
        nodes.add(p);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the node should have refused to start");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(exitCode, p.exitValue(), output);
        assertEquals(List.of(line), output.lines().toList());
    }

    @Test
    void aNodeRefusesABadFlagInOneLine() throws Exception {
        assertRefused(2, "croupier node: --classpath entry '" + spill.resolve("missing.jar") + "' does not exist",
                "--port", "0", "--classpath", spill.resolve("missing.jar").toString());
    }

    /** A parent that is not running is refused in one line naming the flag and the process id. */
    @Test
    void aNodeRefusesAParentThatIsNotRunning() throws Exception {
        Process ended = new ProcessBuilder("true").start();
        assertTrue(ended.waitFor(10, TimeUnit.SECONDS));
        assertRefused(1, "croupier node: --parent = " + ended.pid() + " is no running process",
                "--port", "0", "--spill-dir", spill.toString(), "--parent", Long.toString(ended.pid()));
    }

    /** A memory folder the store cannot use is refused in one line naming the flag and the folder. */
    @Test
    void aNodeRefusesAMemoryFolderItCannotUseNamingTheFlag() throws Exception {
        Path missing = spill.resolve("memoryDirectory");
        assertRefused(1, "croupier node: --memory-dir = " + missing + " is not an existing writable directory",
                "--port", "0", "--spill-dir", spill.toString(), "--memory-dir", missing.toString());
    }
}
