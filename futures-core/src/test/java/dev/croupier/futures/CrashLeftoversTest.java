package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a process killed with {@code kill -9} leaves in the spill folder (an embedded driver's
 * {@code croupier-cluster-*}, a node's {@code croupier-node-*}, each with its claim) is deleted
 * by the next cluster or node that starts there; a closed cluster leaves nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrashLeftoversTest {

    @TempDir
    Path spill;

    private Set<String> entries(String prefix) throws IOException {
        try (Stream<Path> files = Files.list(spill)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix))
                    .collect(Collectors.toSet());
        }
    }

    @Test
    void aKilledEmbeddedDriversFolderIsDeletedByTheNextClusterAndAClosedOneLeavesNothing() throws Exception {
        Path legacyEmpty = Files.createDirectory(spill.resolve("croupier-cluster-legacy"));
        Path legacyBusy = Files.createDirectory(spill.resolve("croupier-cluster-busy"));
        Files.writeString(legacyBusy.resolve("file"), "in use, for all anyone can tell");
        List<String> cmd = new ArrayList<>(ProcessClusterTest.javaCommand());
        cmd.set(cmd.indexOf(NodeServer.class.getName()), EmbeddedDriverMain.class.getName());
        cmd.add(spill.toString());
        Process driver = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            assertEquals("running", new BufferedReader(new InputStreamReader(driver.getInputStream(),
                    StandardCharsets.UTF_8)).readLine());
        } finally {
            driver.destroyForcibly(); // kill -9
            driver.waitFor();
        }
        Set<String> left = entries("croupier-cluster-");
        assertEquals(3, left.size(), "the dead driver's folder and claim, and the busy legacy folder: " + left);
        assertTrue(Files.notExists(legacyEmpty), "the driver deleted the empty folder without a claim as it started");
        try (Cluster c = Cluster.builder().nodes(1).objectStoreBytes(8L << 20).spillDirectory(spill).start()) {
            assertEquals(2, c.task(() -> 2).remote().get());
            Set<String> now = entries("croupier-cluster-");
            now.removeAll(left);
            assertEquals(2, now.size(), "this cluster's folder and claim: " + now);
            assertEquals(Set.of("croupier-cluster-busy"), entries("croupier-cluster-").stream()
                    .filter(left::contains).collect(Collectors.toSet()),
                    "the dead driver's folder and claim are gone; a busy one without a claim stays");
        }
        assertEquals(Set.of("croupier-cluster-busy"), entries("croupier-cluster-"), "a closed cluster leaves nothing");
    }

    @Test
    void aKilledNodesFolderIsDeletedByTheNextNodeAndAClosedClusterLeavesNothing() throws Exception {
        try (Cluster c = Cluster.builder().processes(2).cpusPerNode(1).objectStoreBytes(8L << 20)
                .spillDirectory(spill).start()) {
            long pid = c.task(() -> ProcessHandle.current().pid()).onNode(1, Affinity.HARD).remote().get();
            Set<String> before = entries("croupier-node-");
            assertEquals(4, before.size(), "two nodes' folders and claims: " + before);
            c.killNode(1);
            assertTrue(ProcessHandle.of(pid).isEmpty() || !ProcessHandle.of(pid).get().isAlive());
            assertEquals(before, entries("croupier-node-"), "a killed node deletes nothing");
            c.restartNode(1);
            Set<String> after = entries("croupier-node-");
            Set<String> kept = new java.util.HashSet<>(before);
            kept.retainAll(after);
            assertEquals(4, after.size(), "the live nodes' folders and claims: " + after);
            assertEquals(2, kept.size(), "node 0's folder and claim stay, the dead node's are gone: " + after);
        }
        assertEquals(Set.of(), entries("croupier-node-"), "a closed cluster's nodes leave nothing");
    }
}
