package dev.croupier.examples.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.examples.CroupierCli;
import dev.croupier.examples.MidJobKill;
import dev.croupier.examples.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** gensort, valsort, sort and sort-benchmark in-process: outputs, exit codes, JSON keys, atomic output. */
@Timeout(180)
class SortCommandsTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    private record Run(int code, String out) {}

    private static Run run(CroupierCli.Command command, String... args) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = command.run(args);
        } finally {
            System.setOut(old);
        }
        return new Run(code, out.toString(StandardCharsets.UTF_8));
    }

    private String[] cluster(String... args) {
        return Stream.concat(Stream.of(args), Stream.of("--nodes", "2", "--store-memory", "16m", "--spill-dir", dir.toString()))
                .toArray(String[]::new);
    }

    @Test
    void gensortSortValsortRoundTrip() throws Exception {
        Path in = dir.resolve("in");
        Path again = dir.resolve("again");
        assertEquals(0, run(new SortCommands.GenSort(), "20000", in.toString(), "--seed", "9").code());
        assertEquals(0, run(new SortCommands.GenSort(), "20000", again.toString(), "--seed", "9").code());
        assertEquals(2_000_000, Files.size(in));
        assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(again), "same seed, same records");

        Run unsorted = run(new SortCommands.ValSort(), in.toString(), "--json");
        assertEquals(1, unsorted.code(), "valsort fails on an unsorted file");
        JsonNode input = JSON.readTree(unsorted.out());
        assertFalse(input.get("ordered").asBoolean());
        assertEquals(20000, input.get("records").asLong());

        Path out = dir.resolve("out");
        JsonNode report = JSON.readTree(run(new SortCommands.Sort(),
                cluster(in.toString(), out.toString(), "--strategy", "riffle", "--partitions", "5", "--json")).out());
        for (String key : List.of("records", "bytes", "seconds", "phases", "spilled_bytes", "restored_bytes",
                "strategy", "nodes", "partitions")) {
            assertTrue(report.has(key), key + " in " + report);
        }
        assertEquals("riffle", report.get("strategy").asText());
        assertEquals(5, report.get("partitions").asInt());
        Run sorted = run(new SortCommands.ValSort(), out.toString(), "--json");
        assertEquals(0, sorted.code());
        JsonNode output = JSON.readTree(sorted.out());
        assertTrue(output.get("ordered").asBoolean());
        assertEquals(input.get("checksum").asText(), output.get("checksum").asText(), "the same records");

        Path parts = dir.resolve("parts");
        assertEquals(0, run(new SortCommands.Sort(), cluster(in.toString(), "--output-parts", parts.toString(),
                "--partitions", "3")).code());
        try (Stream<Path> files = Files.list(parts)) {
            assertEquals(List.of("part-00000", "part-00001", "part-00002"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    @Test
    void sortOnThreeNodeProcessesWritesTheBytesOfTheEmbeddedSort() throws Exception {
        Path in = dir.resolve("in");
        assertEquals(0, run(new SortCommands.GenSort(), "30000", in.toString(), "--seed", "5").code());
        Path embedded = dir.resolve("embedded");
        Path processes = dir.resolve("processes");
        String[] shape = {"--partitions", "4", "--mappers", "3", "--store-memory", "16m", "--spill-dir", dir.toString(),
                "--json"};
        Run onThreads = run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), embedded.toString(),
                "--nodes", "3"), Stream.of(shape)).toArray(String[]::new));
        Run onProcesses = run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), processes.toString(),
                "--processes", "3"), Stream.of(shape)).toArray(String[]::new));
        assertEquals(0, onThreads.code());
        assertEquals(0, onProcesses.code());
        assertEquals(3, JSON.readTree(onProcesses.out()).get("nodes").asInt(), onProcesses.out());
        assertEquals(3_000_000, Files.size(processes));
        assertArrayEquals(Files.readAllBytes(embedded), Files.readAllBytes(processes), "the same sorted bytes");
        assertTrue(JSON.readTree(run(new SortCommands.ValSort(), processes.toString(), "--json").out())
                .get("ordered").asBoolean());
    }

    @Test
    void aNodeProcessKilledInTheMiddleOfASortChangesNoByteAndIsCounted() throws Exception {
        Path in = dir.resolve("in");
        assertEquals(0, run(new SortCommands.GenSort(), "30000", in.toString(), "--seed", "8").code());
        Path calm = dir.resolve("calm");
        Path killed = dir.resolve("killed");
        // 6 maps of 500 KB over 3 nodes: every node runs maps, and each map block (125 KB) is
        // above the inline bound, so it lives on its node and is lost with it
        String[] shape = {"--processes", "3", "--partitions", "4", "--mappers", "6", "--store-memory", "16m",
                "--spill-dir", dir.toString(), "--json"};
        Run calmRun = run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), calm.toString()),
                Stream.of(shape)).toArray(String[]::new));
        JsonNode calmReport = JSON.readTree(calmRun.out());
        for (String key : List.of("retried_tasks", "rebuilt_objects", "nodes_lost")) {
            assertEquals(0, calmReport.get(key).asLong(), key + " of a calm run: " + calmRun.out());
        }
        assertEquals(0, calmReport.get("detection_seconds").size());

        Run killedRun;
        try (MidJobKill kill = MidJobKill.whenFirstCompletes("-map")) {
            killedRun = run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), killed.toString()),
                    Stream.of(shape)).toArray(String[]::new));
            assertTrue(kill.killedPid() > 0, "a node was killed in the middle of the sort");
        }
        assertEquals(0, killedRun.code());
        assertArrayEquals(Files.readAllBytes(calm), Files.readAllBytes(killed), "the same sorted bytes");
        JsonNode report = JSON.readTree(killedRun.out());
        assertEquals(1, report.get("nodes_lost").asInt(), killedRun.out());
        assertEquals(2, report.get("nodes").asInt(), killedRun.out());
        assertTrue(report.get("retried_tasks").asLong() + report.get("rebuilt_objects").asLong() > 0,
                "the lost node's maps ran again: " + killedRun.out());
        assertEquals(1, report.get("detection_seconds").size(), killedRun.out());
        assertTrue(report.get("detection_seconds").get(0).asDouble() >= 0, killedRun.out());
    }

    @Test
    void aNodeGivenSigtermInTheMiddleOfASortDrainsExitsZeroAndChangesNoByte() throws Exception {
        Path in = dir.resolve("in");
        assertEquals(0, run(new SortCommands.GenSort(), "30000", in.toString(), "--seed", "9").code());
        Path calm = dir.resolve("calm");
        Path drained = dir.resolve("drained");
        String[] shape = {"--partitions", "4", "--mappers", "6", "--json"};
        assertEquals(0, run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), calm.toString(), "--nodes",
                "3"), Stream.of(shape)).toArray(String[]::new)).code());
        List<Process> nodes = new java.util.ArrayList<>();
        java.util.concurrent.atomic.AtomicReference<Process> victim = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicLong termAt = new java.util.concurrent.atomic.AtomicLong();
        try {
            List<String> addresses = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) { // started as `croupier node` is, with the default drain bound
                List<String> cmd = new java.util.ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
                cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
                cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), dev.croupier.futures.NodeServer.class.getName(),
                        "--port", "0", "--cpus", "1", "--store-memory", "16m", "--spill-dir", dir.toString()));
                Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                nodes.add(p);
                String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8)).readLine();
                assertTrue(line != null && line.startsWith(dev.croupier.futures.NodeServer.READY), String.valueOf(line));
                addresses.add(line.substring(dev.croupier.futures.NodeServer.READY.length()));
            }
            dev.croupier.futures.internal.OutcomeTap.arm("-map", event -> {
                Process p = nodes.get((event.nodeId() + 1) % nodes.size());
                victim.set(p);
                termAt.set(System.nanoTime());
                p.destroy(); // SIGTERM, as Kubernetes stops a pod
            });
            Run run = run(new SortCommands.Sort(), Stream.concat(Stream.of(in.toString(), drained.toString(),
                    "--cluster", String.join(",", addresses)), Stream.of(shape)).toArray(String[]::new));
            assertEquals(0, run.code(), run.out());
            assertArrayEquals(Files.readAllBytes(calm), Files.readAllBytes(drained), "the same sorted bytes");
            Process p = victim.get();
            assertTrue(p != null, "a node was sent SIGTERM in the middle of the sort");
            assertTrue(p.waitFor(dev.croupier.futures.NodeServer.DEFAULT_DRAIN_SECONDS + 10, java.util.concurrent.TimeUnit.SECONDS),
                    "the drained node ends within its drain bound");
            assertEquals(0, p.exitValue(), "a drained node exits 0");
            assertTrue(System.nanoTime() - termAt.get() < java.util.concurrent.TimeUnit.SECONDS.toNanos(
                    dev.croupier.futures.NodeServer.DEFAULT_DRAIN_SECONDS + 10));
        } finally {
            dev.croupier.futures.internal.OutcomeTap.disarm();
            for (Process p : nodes) {
                p.destroyForcibly().waitFor();
            }
        }
    }

    @Test
    void aFailedSortLeavesNoOutputAndNoTemporaryFile() throws Exception {
        Path bad = dir.resolve("bad");
        Files.write(bad, new byte[250]);
        Path outDir = Files.createDirectories(dir.resolve("o"));
        Exception e = assertThrows(Exception.class,
                () -> run(new SortCommands.Sort(), cluster(bad.toString(), outDir.resolve("out").toString())));
        assertTrue(e.getMessage().contains("offset 200"), e.getMessage());
        try (Stream<Path> left = Files.list(outDir)) {
            assertEquals(List.of(), left.toList(), "no OUT, no temporary file");
        }
        Path partsDir = dir.resolve("p");
        assertThrows(Exception.class,
                () -> run(new SortCommands.Sort(), cluster(bad.toString(), "--output-parts", partsDir.toString())));
        try (Stream<Path> left = Files.list(partsDir)) {
            assertEquals(List.of(), left.toList(), "no part, no temporary folder");
        }
        assertThrows(UsageException.class, () -> run(new SortCommands.Sort(), cluster(bad.toString(), "x", "--strategy", "fast")));
    }

    /**
     * An output that cannot be written is named before any work, as the user gave it, not by
     * the temporary file the command would have written first.
     */
    @Test
    void anOutputThatCannotBeWrittenIsNamedBeforeAnyWork() throws Exception {
        Path in = dir.resolve("in");
        assertEquals(0, run(new SortCommands.GenSort(), "100", in.toString()).code());
        Path folder = Files.createDirectories(dir.resolve("a-folder"));
        UsageException usage = assertThrows(UsageException.class,
                () -> run(new SortCommands.Sort(), cluster(in.toString(), folder.toString())));
        assertEquals(folder + " is a folder; give the name of the file to write", usage.getMessage());
        usage = assertThrows(UsageException.class, () -> run(new SortCommands.GenSort(), "10", folder.toString()));
        assertEquals(folder + " is a folder; give the name of the file to write", usage.getMessage());
        Path underAFile = in.resolve("out");
        Exception e = assertThrows(java.io.IOException.class,
                () -> run(new SortCommands.Sort(), cluster(in.toString(), underAFile.toString())));
        assertEquals("cannot write " + underAFile + ": " + in + " is not a folder", e.getMessage());
        e = assertThrows(java.io.IOException.class, () -> run(new SortCommands.GenSort(), "10", underAFile.toString()));
        assertEquals("cannot write " + underAFile + ": " + in + " is not a folder", e.getMessage());
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(folder, in), left.sorted().toList(), "nothing written beside them");
        }
    }

    /**
     * An output folder that fills up while the reducers write (a 1 MiB tmpfs for a 4 MB sort):
     * the sort fails with the file system's reason, naming OUT (or the part) as the user gave
     * it, and leaves neither OUT nor a temporary file or folder.
     */
    @Test
    void anOutputFolderThatFillsFailsTheSortAndLeavesNothing() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small.toString())
                .redirectErrorStream(true).start();
        String why = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        boolean mounted = mount.waitFor() == 0;
        if (!mounted) {
            System.out.println("SortCommandsTest.anOutputFolderThatFillsFailsTheSortAndLeavesNothing skipped: cannot"
                    + " mount a small tmpfs (needs root): " + why);
        }
        Assumptions.assumeTrue(mounted, "cannot mount a small tmpfs: " + why);
        try {
            Path in = dir.resolve("in");
            assertEquals(0, run(new SortCommands.GenSort(), "40000", in.toString()).code());
            Path out = small.resolve("out");
            Exception e = assertThrows(Exception.class, () -> run(new SortCommands.Sort(), cluster(in.toString(),
                    out.toString())));
            // whichever reducer finds the folder full names OUT, its range's size and offset
            assertTrue(e.getMessage().matches("(?s).*cannot write \\d+ bytes to " + java.util.regex.Pattern.quote(
                    out.toString()) + " at byte offset \\d+: No space left on device.*"), e.getMessage());
            e = assertThrows(Exception.class, () -> run(new SortCommands.Sort(), cluster(in.toString(),
                    "--output-parts", small.toString())));
            assertTrue(e.getMessage().matches("(?s).*cannot write \\d+ bytes to " + java.util.regex.Pattern.quote(
                    small.resolve("part-0000").toString()) + "\\d at byte offset 0: No space left on device.*"),
                    e.getMessage());
            // gensort names the file once, and why
            Path generated = small.resolve("generated");
            e = assertThrows(Exception.class, () -> run(new SortCommands.GenSort(), "40000", generated.toString()));
            assertEquals("cannot write " + generated + ": No space left on device", e.getMessage());
            try (Stream<Path> left = Files.list(small)) {
                assertEquals(List.of(), left.toList(), "no OUT, no part, no temporary file or folder");
            }
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor();
        }
    }

    @Test
    void theNextSortRemovesWhatAKilledSortLeftAndSparesALiveOne() throws Exception {
        Path in = dir.resolve("in");
        run(new SortCommands.GenSort(), "2000", in.toString());
        Path outDir = Files.createDirectories(dir.resolve("shared-out"));
        Process killed = holder(outDir);
        Process alive = holder(outDir);
        try {
            String killedName = new java.io.BufferedReader(new java.io.InputStreamReader(killed.getInputStream())).readLine();
            String aliveName = new java.io.BufferedReader(new java.io.InputStreamReader(alive.getInputStream())).readLine();
            killed.destroyForcibly();
            killed.waitFor();
            assertTrue(Files.exists(outDir.resolve(killedName + ".tmp")), "kill -9 leaves the temporary output");
            assertEquals(0, run(new SortCommands.Sort(), cluster(in.toString(), outDir.resolve("out").toString())).code());
            try (Stream<Path> left = Files.list(outDir)) {
                assertEquals(java.util.Set.of("out", aliveName + ".tmp", aliveName + ".lock"),
                        left.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet()),
                        "the dead run's temporaries are gone, the live run's stay");
            }
        } finally {
            killed.destroyForcibly();
            alive.destroyForcibly();
            alive.waitFor();
        }
    }

    private static Process holder(Path outDir) throws java.io.IOException {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), HeldClaimMain.class.getName(), outDir.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    @Test
    void sortBenchmarkReportsEveryKeyAndValidatesOnDiskAndInMemory() throws Exception {
        // 3 MiB fits in the two 16 MiB stores; 40 MiB does not, and 8 MiB of it must go to disk and back
        for (List<String> mode : List.of(List.of("--size", "3m"), List.of("--size", "3m", "--in-memory"), List.of("--size", "40m"))) {
            List<String> args = new java.util.ArrayList<>(mode);
            args.addAll(List.of("--partitions", "4", "--json"));
            Run r = run(new SortCommands.SortBenchmark(), cluster(args.toArray(String[]::new)));
            assertEquals(0, r.code(), r.out());
            JsonNode report = JSON.readTree(r.out());
            for (String key : List.of("records", "bytes", "seconds", "phases", "spilled_bytes", "restored_bytes",
                    "strategy", "nodes", "partitions", "valid", "checksum")) {
                assertTrue(report.has(key), key + " in " + report);
            }
            assertTrue(report.get("valid").asBoolean());
            assertEquals(report.get("input_checksum").asText(), report.get("checksum").asText());
            long mib = 1024 * 1024;
            long expectedBytes = (mode.get(1).equals("3m") ? 3 * mib : 40 * mib) / 100 * 100;
            assertEquals(expectedBytes, report.get("bytes").asLong(), "sizes are binary: 3m is 3 MiB");
            assertEquals(2, report.get("nodes").asInt());
            if (mode.contains("--in-memory")) {
                assertFalse(report.has("bound_seconds"), "no disk, no disk bound: " + report);
                continue;
            }
            // On disk, the time is set against the bound with the input read at the faster of
            // the map phase's and the check's rates, and against the probe's bound alone; what
            // the stores cannot hold is written and read back.
            double bytes = report.get("bytes").asDouble();
            long spill = Math.max(0, (long) bytes - 2 * 16 * mib);
            assertEquals(mode.get(1).equals("3m") ? 0 : expectedBytes - 32 * mib, spill);
            String text = report.get("bound").asText();
            assertTrue(text.startsWith(spill == 0 ? "read and write the data once, at the disk's bandwidth"
                    : "read and write the data once, and write and read back the " + spill + " bytes the stores cannot hold"), text);
            double write = report.get("disk_write_mb_per_s").asDouble() * 1e6;
            double probeRead = report.get("disk_read_mb_per_s").asDouble() * 1e6;
            double mapRead = report.get("map_read_mb_per_s").asDouble() * 1e6;
            assertEquals(bytes / report.get("phases").get("map").asDouble(), mapRead, mapRead * 1e-9);
            double inputRead = Math.max(mapRead, report.get("input_check_read_mb_per_s").asDouble() * 1e6);
            double bound = (bytes + spill) / write + bytes / inputRead + spill / probeRead;
            assertEquals(bound, report.get("bound_seconds").asDouble(), bound * 1e-9);
            assertEquals(report.get("seconds").asDouble() / bound, report.get("ratio_to_bound").asDouble(), 1e-9);
            double probed = (bytes + spill) / write + (bytes + spill) / probeRead;
            assertEquals(probed, report.get("probe_bound_seconds").asDouble(), probed * 1e-9);
            assertEquals(report.get("seconds").asDouble() / probed, report.get("ratio_to_probe_bound").asDouble(), 1e-9);
        }
    }
}
