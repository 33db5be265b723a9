package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.NodeServer;
import dev.croupier.futures.ObjectRef;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A driver on the module path starts its node processes on the class path, with its other
 * flags and those that keep a node's log free of notices; a driver's own ahead-of-time cache
 * stays its own.
 */
class NodeProcessesFlagsTest {

    @Test
    void nodesDropTheDriversModuleOptionsAndKeepTheRest() {
        List<String> driver = List.of("-Xmx2g", "--module-path=app.jar:lib/a.jar", "--add-modules=ALL-MODULE-PATH",
                "--add-reads=com.example=ALL-UNNAMED", "--patch-module=com.example=tests",
                "--add-opens=com.example/com.example=ALL-UNNAMED", "--add-opens=java.base/java.lang=com.example",
                "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--enable-native-access=dev.croupier.objectstore",
                "-Djdk.module.main=com.example", "-agentlib:jdwp=transport=dt_socket", "-Dapp.setting=1");
        assertEquals(quiet("-Xmx2g", "--add-opens=com.example/com.example=ALL-UNNAMED",
                        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "-Dapp.setting=1", "-XX:+UseParallelGC"),
                NodeProcesses.nodeFlags(driver, false));
    }

    /**
     * The launcher runs a driver recording or reading its own ahead-of-time cache; nodes must
     * not record into that one file together, nor read a cache of another program's run.
     */
    @Test
    void nodesDropTheDriversAheadOfTimeCacheAndArchiveFlags() {
        List<String> driver = new ArrayList<>(List.of("-XX:AOTMode=record", "-XX:AOTConfiguration=/tmp/cli.conf",
                "-XX:AOTCache=/tmp/cli.aot", "-XX:+AOTCompileEagerly", "-XX:AOTCacheOutput=/tmp/out.aot",
                "-XX:SharedArchiveFile=/tmp/app.jsa",
                "-XX:-DisplayVMOutput", "-Xlog:aot*=off,cds*=off", "-Xlog:gc", "-Xshare:auto"));
        driver.addAll(NodeProcesses.FROM_CACHE); // as the launcher runs a driver from its cache
        List<String> unlocks = NodeProcesses.FROM_CACHE.stream().filter(f -> f.startsWith("-XX:+Unlock")).toList();
        List<String> node = new ArrayList<>(List.of("-Xlog:gc", "-Xshare:auto"));
        node.addAll(unlocks); // kept: they only unlock flags, which a driver's other flags may need
        node.add("-XX:+UseParallelGC");
        assertEquals(quiet(node.toArray(String[]::new)), NodeProcesses.nodeFlags(driver, false));
    }

    /** Nodes run the throughput collector, or the one the driver's flags chose (the JVM refuses two). */
    @Test
    void nodesRunTheThroughputCollectorUnlessTheDriverChoseOne() {
        assertEquals(quiet("-Xmx1g", "-XX:+UseParallelGC"), NodeProcesses.nodeFlags(List.of("-Xmx1g"), false));
        assertEquals(quiet("-XX:+UseG1GC", "-Xmx1g"),
                NodeProcesses.nodeFlags(List.of("-XX:+UseG1GC", "-Xmx1g"), false));
        assertEquals(quiet("-XX:+UseSerialGC"), NodeProcesses.nodeFlags(List.of("-XX:+UseSerialGC"), false));
    }

    /**
     * Where the run's JVMs outnumber the processors, nodes compile less, unless the driver's
     * flags set the JIT's thresholds; with processors to spare they keep the JVM's defaults.
     */
    @Test
    void nodesOfACrowdedMachineCompileLessUnlessTheDriverSetsTheThresholds() {
        List<String> crowded = NodeProcesses.nodeFlags(List.of("-Xmx1g"), true);
        int quiet = NodeProcesses.QUIET.size();
        assertEquals(quiet("-Xmx1g", "-XX:+UseParallelGC"), crowded.subList(0, 2 + quiet));
        assertEquals(NodeProcesses.FEWER_COMPILES, crowded.subList(2 + quiet, crowded.size()));
        assertTrue(NodeProcesses.FEWER_COMPILES.stream().allMatch(f -> f.startsWith("-XX:Tier")));
        assertEquals(quiet("-XX:Tier4InvocationThreshold=9000", "-XX:+UseParallelGC"),
                NodeProcesses.nodeFlags(List.of("-XX:Tier4InvocationThreshold=9000"), true));
        assertEquals(quiet("-Xmx1g", "-XX:+UseParallelGC"), NodeProcesses.nodeFlags(List.of("-Xmx1g"), false));
    }

    /**
     * The driver's own choice of the Unsafe and logging options stands; its grant of native
     * access names modules a node does not have, so a node's is to the class path whatever it was.
     */
    @Test
    void nodesKeepTheDriversUnsafeAndLoggingOptions() {
        assertEquals(List.of("--sun-misc-unsafe-memory-access=warn", "-Dslf4j.internal.verbosity=WARN",
                        "-XX:+UseParallelGC", "--enable-native-access=ALL-UNNAMED"),
                NodeProcesses.nodeFlags(List.of("--sun-misc-unsafe-memory-access=warn",
                        "--enable-native-access=ALL-UNNAMED", "-Dslf4j.internal.verbosity=WARN"), false));
    }

    /**
     * A node that a driver started with no JVM flags writes nothing to its log while it starts,
     * serves, spills, restores and stops: a node killed with {@code kill -9} then has no line
     * for the driver to quote as its last word but a line of its own or of its JVM's end.
     */
    @Test
    void aNodeOfADriverWithoutFlagsWritesNothingToItsLogWhileItServes(@TempDir Path dir) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(NodeProcesses.nodeFlags(List.of(), false));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), NodeServer.class.getName(),
                "--port", "0", "--cpus", "1", "--store-memory", "16m", "--spill-dir", dir.toString()));
        Path log = dir.resolve("node.log");
        Process node = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.to(log.toFile())).start();
        try {
            String ready = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(ready != null && ready.startsWith(NodeServer.READY), ready + "; log: " + Files.readString(log));
            try (Cluster c = Cluster.connect(ready.substring(NodeServer.READY.length()))) {
                List<ObjectRef<byte[]>> made = new ArrayList<>();
                for (int i = 0; i < 6; i++) { // 24 MiB in a 16 MiB store: the early ones spill
                    int seed = i;
                    made.add(c.task(() -> filled(seed)).remote());
                }
                for (int i = 0; i < made.size(); i++) { // and are restored to be read
                    assertArrayEquals(filled(i), made.get(i).get());
                }
                assertTrue(c.stats().nodes().getFirst().bytesSpilled() > 0, "objects spilled");
            }
        } finally {
            node.destroy();
            assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node stops on SIGTERM");
        }
        assertEquals("", Files.readString(log));
    }

    private static byte[] filled(int seed) {
        byte[] bytes = new byte[4 << 20];
        new java.util.SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static List<String> quiet(String... flags) {
        List<String> out = new ArrayList<>(List.of(flags));
        out.addAll(NodeProcesses.QUIET);
        return out;
    }

    /**
     * A driver whose launcher is recording its own ahead-of-time cache passes
     * {@code -XX:+UnlockDiagnosticVMOptions} to its nodes, and one reading it
     * {@code -XX:+UnlockExperimentalVMOptions}; their cache must be the one every later run
     * finds, or each build trains two.
     */
    @Test
    void theNodesCacheIsTheSameWhetherOrNotTheDriverUnlocksFlags(@TempDir Path dir) throws Exception {
        String cp = Files.writeString(dir.resolve("a.jar"), "not really a jar").toString();
        Path plain = NodeProcesses.cacheFile(dir, List.of("-Xmx1g", "-XX:+UseParallelGC"), cp);
        assertEquals(plain, NodeProcesses.cacheFile(dir,
                List.of("-XX:+UnlockDiagnosticVMOptions", "-Xmx1g", "-XX:+UseParallelGC"), cp));
        assertEquals(plain, NodeProcesses.cacheFile(dir,
                List.of("-XX:+UnlockExperimentalVMOptions", "-Xmx1g", "-XX:+UseParallelGC"), cp));
        assertTrue(!plain.equals(NodeProcesses.cacheFile(dir, List.of("-Xmx2g", "-XX:+UseParallelGC"), cp)),
                "other flags, another cache");
        assertEquals(null, NodeProcesses.cacheFile(dir, List.of("-Xshare:off"), cp), "sharing chosen: none");
        Files.writeString(Files.createDirectories(dir.resolve("classes")).resolve("A.class"), "");
        assertEquals(null, NodeProcesses.cacheFile(dir, List.of("-Xmx1g"), cp + File.pathSeparator + dir.resolve("classes")),
                "a class folder: none");
    }

    /**
     * A node reading a cache compiles eagerly from it on JDK 25, whose flag for that is
     * experimental, and without two loop optimizations: this JDK must take the flags and set what
     * they name (a JDK without one of them would refuse to start every node).
     */
    @Test
    void theJvmTakesTheFlagsANodeReadingACacheGets() throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(NodeProcesses.FROM_CACHE);
        command.addAll(List.of("-XX:+PrintFlagsFinal", "-version"));
        Process java = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(java.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, java.exitValue(), output);
        boolean eager = output.lines().anyMatch(l -> l.matches("\\s*bool AOTCompileEagerly\\s+= true\\s.*"));
        assertEquals(Runtime.version().feature() == 25, eager, "AOTCompileEagerly on JDK " + Runtime.version());
        for (String loops : List.of("UseProfiledLoopPredicate", "LoopUnswitching")) {
            boolean off = output.lines().anyMatch(l -> l.matches("\\s*bool " + loops + "\\s+= false\\s.*"));
            assertEquals(Runtime.version().feature() == 25, off, loops + " off on JDK " + Runtime.version());
        }
    }

    @Test
    void aNodesClassPathIsTheDriversClassPathThenItsModulePath() {
        String sep = File.pathSeparator;
        assertEquals("a.jar" + sep + "b.jar" + sep + "m.jar", NodeProcesses.nodeClassPath("a.jar" + sep + "b.jar", "m.jar"));
        assertEquals("m.jar", NodeProcesses.nodeClassPath("", "m.jar"));
        assertEquals("a.jar", NodeProcesses.nodeClassPath("a.jar", null));
    }
}
