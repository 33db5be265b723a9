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
 * leaves a live store of another process untouched. A store in its process's own memory (an
 * embedded node's) leaves no memory, but its folder in the memory directory still names its
 * spill directory, which is reclaimed the same way.
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
            List<String> killedNames = List.of("killed", "killed-private");
            List<Process> killed = List.of(holder("killed", holders), holder("killed-private", holders, "private"));
            holder("alive", holders);
            for (String name : killedNames) {
                Path killedSpill = spill.resolve("croupier-store-" + name);
                assertTrue(Files.exists(killedSpill.resolve("store.lock")));
                assertTrue(countFiles(killedSpill) > 1, "the killed store had spilled: " + name);
            }
            assertFalse(Files.exists(memory.resolve("croupier-store-killed-private").resolve(MemoryRegion.FILE_NAME)),
                    "a private store keeps no region file");
            for (Process p : killed) {
                p.destroyForcibly();
                assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            }
            for (String name : killedNames) {
                assertTrue(Files.exists(memory.resolve("croupier-store-" + name)),
                        "SIGKILL leaves the memory directory behind: " + name);
            }

            try (ObjectStore next = ObjectStore.builder().name("next").capacityBytes(1L << 20)
                    .memoryDirectory(memory).spillDirectory(spill).build()) {
                for (String name : killedNames) {
                    assertFalse(Files.exists(memory.resolve("croupier-store-" + name)),
                            "the killed store's memory directory is reclaimed: " + name);
                    assertFalse(Files.exists(spill.resolve("croupier-store-" + name)),
                            "and the spill directory it named: " + name);
                }
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

    private Process holder(String name, List<Process> holders, String... memoryKind) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp", System.getProperty("java.class.path"),
                StoreHolderMain.class.getName(), name, memory.toString(), spill.toString()));
        command.addAll(List.of(memoryKind));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
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
