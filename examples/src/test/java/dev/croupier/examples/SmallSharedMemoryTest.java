package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A container's /dev/shm is often small (Docker gives 64 MiB). Embedded nodes keep their stores
 * in their JVM's own memory, so the folder's size does not bound them: the sort sizes its stores
 * from the machine's memory and spills nothing. Node processes keep theirs in /dev/shm files, so
 * the default refuses them in one line that names the memory folder and the way out. Each
 * command runs in a mount namespace of its own whose /dev/shm is a 64 MiB tmpfs.
 */
@Timeout(300)
class SmallSharedMemoryTest {

    @TempDir
    static Path dir;

    /** What one command printed, and its exit code. */
    private record Run(int code, String out, String err) {}

    @BeforeAll
    static void needsAMountNamespace() throws Exception {
        Process probe = new ProcessBuilder("unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64m tmpfs /dev/shm")
                .redirectErrorStream(true).start();
        String why = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        boolean can = probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0;
        if (!can) {
            System.out.println("SmallSharedMemoryTest skipped: cannot mount a tmpfs on /dev/shm in a mount namespace"
                    + " (needs root and unshare): " + why);
        }
        Assumptions.assumeTrue(can, "no mount namespace: " + why);
    }

    /** {@code croupier args} in a JVM of this test's flags, with a 64 MiB /dev/shm of its own. */
    private static Run withSmallShm(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("unshare", "-m", "sh", "-c",
                "mount -t tmpfs -o size=64m tmpfs /dev/shm && exec \"$@\"", "sh",
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), CroupierCli.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(dir.resolve("err.txt").toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the command ends");
        return new Run(p.exitValue(), out, java.nio.file.Files.readString(dir.resolve("err.txt")));
    }

    @Test
    void embeddedNodesSizeTheirStoresFromMemoryNotFromTheFolder() throws Exception {
        Run r = withSmallShm("sort-benchmark", "--in-memory", "--size", "256m", "--spill-dir", dir.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode report = new ObjectMapper().readTree(r.out());
        assertTrue(report.get("valid").asBoolean(), r.out());
        assertEquals(0, report.get("spilled_bytes").asLong(), "256 MiB fit in stores the folder could not hold");
        String sizing = report.get("store_sizing").asText();
        assertTrue(sizing.contains("available") && !sizing.contains("memory folder"), sizing);
        assertTrue(report.get("store_bytes_per_node").asLong() * 4 > 64L << 20, "more than the folder holds: " + r.out());
    }

    @Test
    void nodeProcessesAreRefusedInOneLineNamingTheFolder() throws Exception {
        Run r = withSmallShm("sort-benchmark", "--processes", "2", "--size", "64m", "--spill-dir", dir.toString());
        assertNotEquals(0, r.code());
        List<String> lines = r.err().lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.getFirst().contains("free in the memory folder") && lines.getFirst().contains("--store-memory"),
                lines.getFirst());
    }
}
