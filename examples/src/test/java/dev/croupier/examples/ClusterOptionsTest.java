package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The cluster options every job subcommand shares, through {@code bin/croupier}'s entry point:
 * each refusal is one line on stderr that names what is wrong, with a non-zero exit, before any
 * work starts.
 */
@Timeout(120)
class ClusterOptionsTest {

    @TempDir
    static Path dir;

    /** Output of one command line run in-process. */
    record Run(int code, String out, String err) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    static Run cli(String... args) {
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = CroupierCli.execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
    }

    /** Each job subcommand with the arguments it needs besides the cluster options. */
    static Stream<List<String>> jobCommands() throws IOException {
        Path spec = dir.resolve("spec.json");
        Files.writeString(spec, "{\"input_format\": \"" + dir.resolve("in/s-{00..01}.tar") + "\", \"output_format\": \""
                + dir.resolve("out/o-{00..09}.tar") + "\", \"output_shard_size\": \"1MiB\"}");
        return Stream.of(List.of("sort", dir.resolve("no-input").toString(), dir.resolve("out").toString()),
                List.of("sort-benchmark"), List.of("reshard", spec.toString()), List.of("loader"),
                List.of("aggregate"), List.of("demo"));
    }

    private static String[] with(List<String> command, String... more) {
        List<String> all = new ArrayList<>(command);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    @ParameterizedTest
    @MethodSource("jobCommands")
    void clusterAndProcessesExcludeEachOther(List<String> command) {
        Run r = cli(with(command, "--cluster", "127.0.0.1:7000", "--processes", "2"));
        assertEquals(2, r.code(), r.err());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("--cluster and --processes exclude each other"), r.err());
    }

    @ParameterizedTest
    @MethodSource("jobCommands")
    void aBadAddressIsNamed(List<String> command) {
        for (String bad : List.of("localhost", "127.0.0.1:7000,host:port", "host:70000", "127.0.0.1:7000,")) {
            Run r = cli(with(command, "--cluster", bad));
            assertEquals(2, r.code(), r.err());
            assertEquals(1, r.errLines().size(), r.err());
            String named = bad.contains(",") ? bad.substring(bad.indexOf(',') + 1) : bad;
            assertTrue(r.err().contains("--cluster: '" + named + "' is not HOST:PORT"), r.err());
        }
    }

    private static ClusterOptions parse(String... args) {
        return ClusterOptions.parse(Options.parse("test", args, Set.of(), ClusterOptions.valuedWith()), 4,
                nodes -> 16L << 20);
    }

    @Test
    void processesRunTasksInOtherProcessesAndNodesInThisOne() {
        long here = ProcessHandle.current().pid();
        try (Cluster embedded = parse("--nodes", "2", "--spill-dir", dir.toString()).start()) {
            assertEquals(List.of(0, 1), embedded.aliveNodes());
            assertEquals(here, embedded.task(() -> ProcessHandle.current().pid()).remote().get());
        }
        try (Cluster processes = parse("--processes", "1", "--spill-dir", dir.toString()).start()) {
            assertEquals(List.of(0), processes.aliveNodes());
            assertEquals(16L << 20, processes.objectStoreBytes());
            assertNotEquals(here, processes.task(() -> ProcessHandle.current().pid()).remote().get());
        }
    }

    @Test
    void optionsThatMeanNothingBesideTheChosenClusterAreRefused() {
        Run nodes = cli("demo", "--processes", "2", "--nodes", "3");
        assertEquals(2, nodes.code());
        assertEquals(List.of("croupier demo: --nodes does not go with --processes: --processes N runs N nodes"),
                nodes.errLines());
        Run store = cli("demo", "--cluster", "127.0.0.1:7000", "--store-memory", "1g");
        assertEquals(2, store.code());
        assertEquals(1, store.errLines().size(), store.err());
        assertTrue(store.err().contains("--store-memory does not go with --cluster"), store.err());
    }

    @Test
    void aPortNobodyListensOnIsOneLineNamingTheAddress() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String address = "127.0.0.1:" + port;
        Path input = dir.resolve("records");
        Files.write(input, new byte[1000]);
        for (String[] args : List.of(new String[] {"demo", "--cluster", address},
                new String[] {"sort", input.toString(), dir.resolve("sorted").toString(), "--cluster", address},
                new String[] {"sort-benchmark", "--size", "10m", "--spill-dir", dir.toString(), "--cluster", address},
                new String[] {"status", "--cluster", address})) {
            Run r = cli(args);
            assertEquals(1, r.code(), r.err());
            assertEquals(1, r.errLines().size(), r.err());
            assertTrue(r.err().startsWith("croupier " + args[0] + ": node " + address + " cannot be reached"), r.err());
            assertTrue(r.err().contains("Connection refused"), "the transport's reason: " + r.err());
        }
        assertTrue(Files.notExists(dir.resolve("sorted")), "no output without a cluster");
    }
}
