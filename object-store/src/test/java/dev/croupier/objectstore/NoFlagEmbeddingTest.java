package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that starts its JVM with no flags at all (no {@code --add-opens}, no
 * {@code -Dchronicle.analytics.disable}) can use the store and make it spill: Chronicle cannot
 * reach {@code java.base} internals there, which once killed the spill thread and hung every
 * allocation. The store must fall back to its plain spill index and turn Chronicle's analytics
 * off by itself. See {@link NoFlagStoreMain} for what the child checks.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NoFlagEmbeddingTest {

    @TempDir
    Path dir;

    @Test
    void aJvmWithoutFlagsSpillsAndReadsBack() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = List.of(java.toString(), "-cp", System.getProperty("java.class.path"),
                NoFlagStoreMain.class.getName(), dir.toString());
        Path log = dir.resolve("child.log");
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            boolean finished = child.waitFor(120, TimeUnit.SECONDS);
            String output = Files.readString(log);
            assertTrue(finished, "the JVM without flags did not finish within 120 s (a hang); it said:\n" + output);
            assertEquals(0, child.exitValue(), "the JVM without flags said:\n" + output);
            assertTrue(output.contains("OK 48 blocks round-tripped"), output);
            assertTrue(output.contains("chronicle.analytics.disable=true"), output);
        } finally {
            child.destroyForcibly();
            child.waitFor();
        }
    }
}
