package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * User code that is on no node's class path: the driver ships the class folder (or jar) of a
 * task's code class when a node asks for it, and the node loads it for that session only. Two
 * drivers with two builds of the same class share one node and each gets its own build's
 * answers; a function whose helper lives in neither place fails naming the missing class. The
 * user's classes need no allow-list entry for their lambdas to travel.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShippedCodeTest {

    @TempDir
    Path dir;

    /** Compiles {@code shipped.Scale}, whose lambda multiplies by {@code factor} and adds its neighbour's offset. */
    private Path build(String name, int factor) throws Exception {
        Path src = dir.resolve(name + "-src/shipped");
        Files.createDirectories(src);
        Files.writeString(src.resolve("Scale.java"), """
                package shipped;
                public final class Scale {
                    public static dev.croupier.futures.Fn1<Integer, Integer> fn() {
                        return x -> Offset.add(x * %d);
                    }
                    public static dev.croupier.futures.Fn1<Integer, Integer> needsAbsent() {
                        return x -> Absent.value() + x;
                    }
                }
                """.formatted(factor));
        Files.writeString(src.resolve("Offset.java"), """
                package shipped;
                final class Offset {
                    static int add(int x) { return x + 1; }
                }
                """);
        Files.writeString(src.resolve("Absent.java"), """
                package shipped;
                final class Absent {
                    static int value() { return 7; }
                }
                """);
        Path out = dir.resolve(name);
        Files.createDirectories(out);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertEquals(0, javac.run(null, null, null, "-d", out.toString(), "-cp", System.getProperty("java.class.path"),
                src.resolve("Scale.java").toString(), src.resolve("Offset.java").toString(),
                src.resolve("Absent.java").toString()));
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Fn1<Integer, Integer> function(ClassLoader loader, String method) throws Exception {
        return (Fn1<Integer, Integer>) loader.loadClass("shipped.Scale").getMethod(method).invoke(null);
    }

    @Test
    void twoDriversShipTwoBuildsOfOneClassToOneNodeAndEachRunsItsOwn() throws Exception {
        Path two = build("two", 2);
        Path three = build("three", 3);
        Files.delete(three.resolve("shipped/Absent.class")); // a helper found nowhere
        Process node = new ProcessBuilder(ProcessClusterTest.javaCommand("--port", "0", "--cpus", "2",
                "--store-memory", "32m", "--spill-dir", dir.toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (URLClassLoader twoLoader = new URLClassLoader(new URL[] {two.toUri().toURL()}, getClass().getClassLoader());
             URLClassLoader threeLoader = new URLClassLoader(new URL[] {three.toUri().toURL()},
                     getClass().getClassLoader())) {
            String line = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(line != null && line.startsWith(NodeServer.READY), String.valueOf(line));
            String address = line.substring(NodeServer.READY.length());
            Fn1<Integer, Integer> timesTwo = function(twoLoader, "fn");
            Fn1<Integer, Integer> timesThree = function(threeLoader, "fn");
            CompletableFuture<Integer> byTwo = CompletableFuture.supplyAsync(() -> run(address, timesTwo, 20));
            CompletableFuture<Integer> byThree = CompletableFuture.supplyAsync(() -> run(address, timesThree, 20));
            assertEquals(41, byTwo.get(60, TimeUnit.SECONDS));
            assertEquals(61, byThree.get(60, TimeUnit.SECONDS));

            Fn1<Integer, Integer> absent = function(threeLoader, "needsAbsent");
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> run(address, absent, 1));
            assertTrue(e.getMessage().contains("NoClassDefFoundError: shipped/Absent"), e.getMessage());
            assertEquals(8, run(address, function(twoLoader, "needsAbsent"), 1), "the other session has it");
        } finally {
            node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static int run(String address, Fn1<Integer, Integer> fn, int x) {
        // No allow-list entry: a lambda's declaring class travels as a reference, not an instance.
        try (Cluster c = Cluster.builder().connect(address).start()) {
            int sum = 0;
            for (int i = 0; i < 3; i++) { // several attempts, the first of which waits for the code
                sum += c.get(c.task(fn, x).remote());
            }
            return sum / 3;
        }
    }
}
