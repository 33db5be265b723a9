package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A driver on the module path starts its node processes on the class path, with its other
 * flags; a driver's own ahead-of-time cache stays its own.
 */
class NodeProcessesFlagsTest {

    @Test
    void nodesDropTheDriversModuleOptionsAndKeepTheRest() {
        List<String> driver = List.of("-Xmx2g", "--module-path=app.jar:lib/a.jar", "--add-modules=ALL-MODULE-PATH",
                "--add-reads=com.example=ALL-UNNAMED", "--patch-module=com.example=tests",
                "--add-opens=com.example/com.example=ALL-UNNAMED", "--add-opens=java.base/java.lang=com.example",
                "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--enable-native-access=dev.croupier.objectstore",
                "-Djdk.module.main=com.example", "-agentlib:jdwp=transport=dt_socket", "-Dapp.setting=1");
        assertEquals(List.of("-Xmx2g", "--add-opens=com.example/com.example=ALL-UNNAMED",
                        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
                        "-Dapp.setting=1", "-XX:+UseParallelGC"),
                NodeProcesses.nodeFlags(driver, false));
    }

    /**
     * The launcher runs a driver recording or reading its own ahead-of-time cache; nodes must
     * not record into that one file together, nor read a cache of another program's run.
     */
    @Test
    void nodesDropTheDriversAheadOfTimeCacheAndArchiveFlags() {
        List<String> driver = List.of("-XX:AOTMode=record", "-XX:AOTConfiguration=/tmp/cli.conf",
                "-XX:AOTCache=/tmp/cli.aot", "-XX:AOTCacheOutput=/tmp/out.aot", "-XX:SharedArchiveFile=/tmp/app.jsa",
                "-XX:-DisplayVMOutput", "-Xlog:aot*=off,cds*=off", "-Xlog:gc", "-Xshare:auto");
        assertEquals(List.of("-Xlog:gc", "-Xshare:auto", "-XX:+UseParallelGC"), NodeProcesses.nodeFlags(driver, false));
    }

    /** Nodes run the throughput collector, or the one the driver's flags chose (the JVM refuses two). */
    @Test
    void nodesRunTheThroughputCollectorUnlessTheDriverChoseOne() {
        assertEquals(List.of("-Xmx1g", "-XX:+UseParallelGC"), NodeProcesses.nodeFlags(List.of("-Xmx1g"), false));
        assertEquals(List.of("-XX:+UseG1GC", "-Xmx1g"),
                NodeProcesses.nodeFlags(List.of("-XX:+UseG1GC", "-Xmx1g"), false));
        assertEquals(List.of("-XX:+UseSerialGC"), NodeProcesses.nodeFlags(List.of("-XX:+UseSerialGC"), false));
    }

    /**
     * Where the run's JVMs outnumber the processors, nodes compile less, unless the driver's
     * flags set the JIT's thresholds; with processors to spare they keep the JVM's defaults.
     */
    @Test
    void nodesOfACrowdedMachineCompileLessUnlessTheDriverSetsTheThresholds() {
        List<String> crowded = NodeProcesses.nodeFlags(List.of("-Xmx1g"), true);
        assertEquals(List.of("-Xmx1g", "-XX:+UseParallelGC"), crowded.subList(0, 2));
        assertEquals(NodeProcesses.FEWER_COMPILES, crowded.subList(2, crowded.size()));
        assertTrue(NodeProcesses.FEWER_COMPILES.stream().allMatch(f -> f.startsWith("-XX:Tier")));
        assertEquals(List.of("-XX:Tier4InvocationThreshold=9000", "-XX:+UseParallelGC"),
                NodeProcesses.nodeFlags(List.of("-XX:Tier4InvocationThreshold=9000"), true));
        assertEquals(List.of("-Xmx1g", "-XX:+UseParallelGC"), NodeProcesses.nodeFlags(List.of("-Xmx1g"), false));
    }

    /**
     * A driver whose launcher is recording its own ahead-of-time cache passes
     * {@code -XX:+UnlockDiagnosticVMOptions} to its nodes; their cache must be the one every
     * later run finds, or each build trains two.
     */
    @Test
    void theNodesCacheIsTheSameWhetherOrNotTheDriverUnlocksDiagnosticFlags(@TempDir Path dir) throws Exception {
        String cp = Files.writeString(dir.resolve("a.jar"), "not really a jar").toString();
        Path plain = NodeProcesses.cacheFile(dir, List.of("-Xmx1g", "-XX:+UseParallelGC"), cp);
        assertEquals(plain, NodeProcesses.cacheFile(dir,
                List.of("-XX:+UnlockDiagnosticVMOptions", "-Xmx1g", "-XX:+UseParallelGC"), cp));
        assertTrue(!plain.equals(NodeProcesses.cacheFile(dir, List.of("-Xmx2g", "-XX:+UseParallelGC"), cp)),
                "other flags, another cache");
        assertEquals(null, NodeProcesses.cacheFile(dir, List.of("-Xshare:off"), cp), "sharing chosen: none");
        Files.writeString(Files.createDirectories(dir.resolve("classes")).resolve("A.class"), "");
        assertEquals(null, NodeProcesses.cacheFile(dir, List.of("-Xmx1g"), cp + File.pathSeparator + dir.resolve("classes")),
                "a class folder: none");
    }

    @Test
    void aNodesClassPathIsTheDriversClassPathThenItsModulePath() {
        String sep = File.pathSeparator;
        assertEquals("a.jar" + sep + "b.jar" + sep + "m.jar", NodeProcesses.nodeClassPath("a.jar" + sep + "b.jar", "m.jar"));
        assertEquals("m.jar", NodeProcesses.nodeClassPath("", "m.jar"));
        assertEquals("a.jar", NodeProcesses.nodeClassPath("a.jar", null));
    }
}
