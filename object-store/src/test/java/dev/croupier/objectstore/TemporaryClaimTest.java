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
 * What a process killed with SIGKILL left under its claim (its folder and its {@code name.}
 * files) is deleted by the next claim of the same prefix; a live process's claim, another
 * prefix's entries and a name that merely starts with a dead claim's name are untouched; close
 * deletes the claim's own temporaries.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TemporaryClaimTest {

    @TempDir
    Path dir;

    @Test
    void theNextClaimDeletesWhatADeadOwnerLeftAndSparesTheLiving() throws Exception {
        List<Process> holders = new ArrayList<>();
        try {
            Process killed = holder(holders);
            String dead = name(killed);
            Process alive = holder(holders);
            String living = name(alive);
            Path longerName = Files.createDirectory(dir.resolve(dead + "0")); // not empty: an empty unclaimed folder goes
            Files.write(longerName.resolve("data"), new byte[1]);
            Path otherPrefix = Files.createFile(dir.resolve("other-" + dead));
            killed.destroyForcibly();
            assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
            assertTrue(Files.exists(dir.resolve(dead).resolve("data")), "SIGKILL deletes nothing");

            try (TemporaryClaim next = TemporaryClaim.folder(dir, "croupier-test-")) {
                assertFalse(Files.exists(dir.resolve(dead)), "the dead owner's folder is reclaimed");
                assertFalse(Files.exists(dir.resolve(dead + ".tmp")), "and its name.-files");
                assertFalse(Files.exists(dir.resolve(dead + ".lock")), "and its claim");
                assertTrue(Files.exists(dir.resolve(living).resolve("data")), "a live owner's folder stays");
                assertTrue(Files.exists(dir.resolve(living + ".tmp")));
                assertTrue(Files.exists(longerName), "a name that only starts with a dead claim's is not its");
                assertTrue(Files.exists(otherPrefix), "another prefix is not looked at");
                assertEquals(0, TemporaryClaim.reclaimDead(dir, "croupier-test-"), "this JVM's claim is never probed");
                Files.write(next.path().resolveSibling(next.name() + ".part"), new byte[10]);
                Path own = next.path();
                next.close();
                assertFalse(Files.exists(own), "close deletes the claim's folder");
                assertFalse(Files.exists(own.resolveSibling(next.name() + ".part")), "and its name.-files");
                assertFalse(Files.exists(own.resolveSibling(next.name() + ".lock")), "and the claim");
            }
        } finally {
            for (Process p : holders) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
    }

    /**
     * Processes taking and dropping claims of one prefix at once, each reclaiming the others'
     * dead ones as it goes: no process's claim loses its lock file or its folder to another's
     * reclaim (a claim's lock file, created and then locked, was once deleted in between).
     */
    @Test
    void claimsTakenAtOnceByManyProcessesKeepTheirFolders() throws Exception {
        ChurnProcesses.assertAllSucceed(4, ClaimChurnMain.class, dir.toString(), "croupier-churn-", "400");
    }

    /**
     * A probe that opened an owner's lock file which the owner then gave up and made anew
     * under the same name (a store directory's is fixed) deletes nothing: not the new file, not
     * what it guards. A probe of a file not replaced reclaims it.
     */
    @Test
    void aProbeOfALockFileReplacedSinceItWasOpenedDeletesNothing() throws Exception {
        Path lock = dir.resolve("croupier-store-x.lock");
        Files.createFile(lock);
        Object key = Files.readAttributes(lock, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        List<String> deleted = new ArrayList<>();
        try (java.nio.channels.FileChannel stale = java.nio.channels.FileChannel.open(lock,
                java.nio.file.StandardOpenOption.WRITE)) {
            Files.delete(lock);
            Files.write(lock, new byte[] {1}); // the owner's new lock file
            assertFalse(TemporaryClaim.reclaimIfUnlocked(lock, key, stale, () -> deleted.add("leftovers")));
        }
        assertEquals(List.of(), deleted);
        assertTrue(Files.exists(lock), "the owner's new lock file stays");
        assertTrue(TemporaryClaim.reclaimIfUnlocked(lock, () -> deleted.add("leftovers")));
        assertEquals(List.of("leftovers"), deleted);
        assertFalse(Files.exists(lock), "an unreplaced, unlocked lock file is reclaimed");
    }

    private Process holder(List<Process> holders) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                ClaimHolderMain.class.getName(), dir.toString(), "croupier-test-")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        holders.add(p);
        return p;
    }

    private static String name(Process p) throws Exception {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }
}
