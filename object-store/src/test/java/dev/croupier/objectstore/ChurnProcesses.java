package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs one main class in several processes at once and asserts each exits 0, quoting what a failing one printed. */
final class ChurnProcesses {
    private ChurnProcesses() {}

    static void assertAllSucceed(int processes, Class<?> main, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        List<Process> started = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                started.add(new ProcessBuilder(command).redirectErrorStream(true).start());
            }
            for (Process p : started) {
                String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                assertTrue(p.waitFor(100, TimeUnit.SECONDS), main.getSimpleName() + " ran out of time");
                assertEquals(0, p.exitValue(), said);
            }
        } finally {
            started.forEach(Process::destroyForcibly);
        }
    }
}
