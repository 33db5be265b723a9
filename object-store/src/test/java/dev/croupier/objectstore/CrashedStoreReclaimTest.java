package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store killed with SIGKILL leaves its memory and spill directories (in /dev/shm: memory
 * nothing gives back until reboot); the next store that opens beside them reclaims them, and
 * leaves a live store of another process untouched.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrashedStoreReclaimTest {

    @TempDir
    Path memory;
    @TempDir
    Path spill;

    @Test
    void theNextStoreReclaimsAKilledStoresDirectoriesAndSparesALiveOne() throws Exception {
        List<Process> holders = new ArrayList<>();
        try {
            Process killed = holder("killed", holders);
            holder("alive", holders);
            Path killedMemory = memory.resolve("croupier-store-killed");
            Path killedSpill = spill.resolve("croupier-store-killed");
            assertTrue(Files.exists(killedSpill.resolve("store.lock")));
            assertTrue(countFiles(killedSpill) > 1, "the killed store had spilled");
            killed.destroyForcibly();
            assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
            assertTrue(Files.exists(killedMemory), "SIGKILL leaves the memory directory behind");

            try (ObjectStore next = ObjectStore.builder().name("next").capacityBytes(1L << 20)
                    .memoryDirectory(memory).spillDirectory(spill).build()) {
                assertFalse(Files.exists(killedMemory), "the killed store's memory directory is reclaimed");
                assertFalse(Files.exists(killedSpill), "and the spill directory it named");
                assertTrue(Files.exists(memory.resolve("croupier-store-alive").resolve("store.lock")),
                        "a live store of another process is untouched");
                assertTrue(countFiles(spill.resolve("croupier-store-alive")) > 1);
                assertEquals(0, StoreDirectories.reclaimDead(memory), "nothing else is dead");
            }
        } finally {
            for (Process p : holders) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
    }

    private Process holder(String name, List<Process> holders) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                StoreHolderMain.class.getName(), name, memory.toString(), spill.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        holders.add(p);
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertEquals("ready", line);
        return p;
    }

    private static long countFiles(Path dir) throws Exception {
        try (var files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).count();
        }
    }

    /**
     * Processes opening and closing stores in one memory folder at once, each reclaiming dead
     * stores as it opens: no store loses its directory to another's reclaim (a lock file,
     * created and then locked, was once deleted in between).
     */
    @Test
    void storesOpenedAtOnceByManyProcessesKeepTheirDirectories(@TempDir Path memory, @TempDir Path spill)
            throws Exception {
        ChurnProcesses.assertAllSucceed(4, StoreChurnMain.class, memory.toString(), spill.toString(), "150");
    }
}
