package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
 * in their JVM's own memory, and node processes whose stores /dev/shm has no room for keep them
 * in their own memory too (instead of a file in the temporary folder, on disk), so the folder's
 * size bounds neither: the sort sizes its stores from the machine's memory, spills nothing,
 * and no store of the job is a file. Each command runs in a mount namespace of its own whose
 * /dev/shm is a 64 MiB tmpfs, with a temporary folder of its own, which a watcher searches for
 * store files every 100 ms while the command runs.
 */
@Timeout(300)
class SmallSharedMemoryTest {

    @TempDir
    static Path dir;

    /** What one command printed, its exit code, and the store files the watcher saw. */
    private record Run(int code, String out, String err, String storeFiles) {}

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

    /**
     * {@code croupier args} in a JVM of this test's flags, with a 64 MiB /dev/shm and a
     * temporary folder of its own (node processes it starts take its flags, so its folder too).
     */
    private static Run withSmallShm(String name, String... args) throws Exception {
        Path tmp = Files.createDirectories(dir.resolve(name + "-tmp"));
        Path seen = dir.resolve(name + "-store-files.txt");
        List<String> command = new ArrayList<>(List.of("unshare", "-m", "sh", "-c",
                "mount -t tmpfs -o size=64m tmpfs /dev/shm && { \"$@\" & job=$!;"
                        + " while kill -0 $job 2>/dev/null; do find /dev/shm \"$TMP\" -name memory.region >> \"$SEEN\";"
                        + " sleep 0.1; done; wait $job; }", "sh",
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path"),
                CroupierCli.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(dir.resolve(name + "-err.txt").toFile());
        builder.environment().put("TMP", tmp.toString());
        builder.environment().put("SEEN", seen.toString());
        Process p = builder.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the command ends");
        return new Run(p.exitValue(), out, Files.readString(dir.resolve(name + "-err.txt")),
                Files.exists(seen) ? Files.readString(seen) : "");
    }

    /** The sort ran, valid, with stores sized from memory, spilling nothing and no store a file. */
    private static void assertSortedInMemoryWithNoStoreFile(Run r) throws Exception {
        assertEquals(0, r.code(), r.err());
        JsonNode report = new ObjectMapper().readTree(r.out());
        assertTrue(report.get("valid").asBoolean(), r.out());
        assertEquals(0, report.get("spilled_bytes").asLong(), "256 MiB fit in stores the folder could not hold");
        String sizing = report.get("store_sizing").asText();
        assertTrue(sizing.contains("available") && !sizing.contains("memory folder"), sizing);
        assertEquals("", r.storeFiles(), "no store was a file, in /dev/shm or the temporary folder");
    }

    @Test
    void embeddedNodesSizeTheirStoresFromMemoryNotFromTheFolder() throws Exception {
        Run r = withSmallShm("embedded", "sort-benchmark", "--in-memory", "--size", "256m", "--spill-dir",
                dir.toString(), "--json");
        assertSortedInMemoryWithNoStoreFile(r);
        assertTrue(new ObjectMapper().readTree(r.out()).get("store_bytes_per_node").asLong() * 4 > 64L << 20,
                "more than the folder holds: " + r.out());
    }

    /** Their objects of 1 MiB or more are read from each other, by copies, not in place. */
    @Test
    void nodeProcessesKeepStoresTheFolderCannotHoldInTheirOwnMemory() throws Exception {
        assertSortedInMemoryWithNoStoreFile(withSmallShm("processes", "sort-benchmark", "--processes", "2",
                "--in-memory", "--size", "256m", "--spill-dir", dir.toString(), "--json"));
    }
}
