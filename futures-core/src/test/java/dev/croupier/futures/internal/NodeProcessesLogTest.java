package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a driver keeps of a node process that ended: the line of its log it quotes when the node
 * ends before it serves, and the ahead-of-time cache node 0 wrote only if it served and stopped.
 */
class NodeProcessesLogTest {

    private static final String NODE_LINE =
            "croupier node: spill folder /tmp/f cannot hold the stores' files: java.nio.file.NoSuchFileException: /tmp/f";

    @Test
    void theNodesOwnLineWinsOverTheLinesAJvmWritingItsCachePrintsAfterIt() {
        List<String> log = List.of(NODE_LINE,
                "Picked up JAVA_TOOL_OPTIONS: -Djava.class.path=/a.jar:/b.jar -XX:AOTMode=create",
                "Reading AOTConfiguration /tmp/c.aot.config and writing AOTCache /tmp/c.aot",
                "AOTCache creation is complete: /tmp/c.aot 16388096 bytes");
        assertEquals(NODE_LINE, NodeProcesses.reason(log));
    }

    @Test
    void aDefectIsQuotedByTheNodesLineAfterItsTrace() {
        List<String> log = List.of("java.lang.IllegalStateException: boom", "\tat a.B.c(B.java:1)",
                "croupier node: cannot start: java.lang.IllegalStateException: boom");
        assertEquals("croupier node: cannot start: java.lang.IllegalStateException: boom", NodeProcesses.reason(log));
    }

    @Test
    void withoutALineOfTheNodesTheJvmsLastErrorIsQuotedButNotItsNotices() {
        List<String> log = List.of("Picked up JAVA_TOOL_OPTIONS: -Dx=1", "Unrecognized VM option 'Nonsense'",
                "Error: Could not create the Java Virtual Machine.", "",
                "Picked up JAVA_TOOL_OPTIONS: -Dy=2");
        assertEquals("Error: Could not create the Java Virtual Machine.", NodeProcesses.reason(log));
        assertNull(NodeProcesses.reason(List.of("Picked up JAVA_TOOL_OPTIONS: -Dx=1", "\tat a.B.c(B.java:1)", "")));
    }

    /**
     * A node JVM writes the cache it records however it exits; only one that served and then
     * stopped as asked (exit 0) has recorded a run. Processes of the shell stand for node 0.
     */
    @Test
    void onlyANodeThatServedAndThenExitedCleanlyLeavesItsCache() throws Exception {
        Process stopped = exited(0);
        Process failed = exited(1);
        assertTrue(NodeProcesses.trainedWell(stopped, true));
        assertFalse(NodeProcesses.trainedWell(stopped, false), "it never served");
        assertFalse(NodeProcesses.trainedWell(failed, true), "it served, then failed");
        assertFalse(NodeProcesses.trainedWell(null, true), "no node recorded one");
        Process running = new ProcessBuilder("sleep", "30").start();
        try {
            assertFalse(NodeProcesses.trainedWell(running, true), "still running, or still writing it");
        } finally {
            running.destroyForcibly().waitFor();
        }
    }

    private static Process exited(int status) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "exit " + status).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return p;
    }
}
