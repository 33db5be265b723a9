package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Object transfer between two node processes: objects made on node 0 are read by tasks
 * placed on node 1, so each is pulled over the data service's stream. Compared in the same
 * run with loopback TCP as {@code iperf3} measures it (when installed) and with a memory copy
 * of the same size in this JVM.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.croupier.benchmarks.futures.TransferBenchmark \
 *     [object sizes = 1,64] [GiB moved per size = 2] [modes = processes] [warm-up seconds = 0]
 * </pre>
 *
 * An object size is MiB when a bare number, else a size as every Croupier flag writes one
 * ({@code 64k}, {@code 256KiB}, {@code 1.5m}).
 *
 * One consumer task reads a batch of objects (up to 128 MiB), one pull after another, as a
 * reducer reads its blocks; the figure includes that task's dispatch and outcome. Each size
 * first moves one batch of up to 8 objects, and goes on warming up for the warm-up seconds:
 * node processes start with cold JIT, and a call to a cold node process costs milliseconds
 * ({@link RoundTripBenchmark}). Node processes on one host lend a task its arguments to read in
 * place, which copies nothing; copies are measured with {@code -Dcroupier.pull.lend=false}, the
 * stream alone with {@code -Dcroupier.pull.sameHost=false}, which the node processes inherit.
 *
 * <p>Modes (comma-separated), each on two fresh node processes: {@code processes} (the driver
 * starts them, {@code processes(2)}); {@code plain}, {@code token} and {@code tls}, nodes
 * started as {@code croupier node} is, without security, with a token on every call, or
 * serving TLS with a certificate made on the spot by {@code openssl}. Nodes on one host pass
 * objects through shared memory, which neither the token nor TLS touches: their cost on the
 * stream shows with {@code -Dcroupier.pull.sameHost=false}.
 */
public final class TransferBenchmark {

    private TransferBenchmark() {}

    public static void main(String[] args) throws Exception {
        String[] sizes = (args.length > 0 ? args[0] : "1,64").split(",");
        double gib = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        String[] modes = (args.length > 2 ? args[2] : "processes").split(",");
        double warmSeconds = args.length > 3 ? Double.parseDouble(args[3]) : 0;
        System.out.printf("loopback TCP (iperf3, 1 stream): %s%n", iperf3());
        Path work = Files.createTempDirectory("croupier-transfer-");
        try {
            for (String mode : modes) {
                try (SecuredNodes nodes = SecuredNodes.start(mode.trim(), work);
                     Cluster c = nodes.driver()) {
                    for (String s : sizes) {
                        long bytes = s.trim().matches("\\d+") ? Long.parseLong(s.trim()) << 20
                                : dev.croupier.futures.NodeServer.parseSize("object size", s.trim());
                        int count = (int) Math.max(4, (long) (gib * (1L << 30)) / bytes);
                        long warmUntil = System.nanoTime() + (long) (warmSeconds * 1e9);
                        do {
                            pullRate(c, bytes, Math.min(count, 8));
                        } while (System.nanoTime() < warmUntil);
                        double pulled = pullRate(c, bytes, count);
                        System.out.printf("%-9s %8s objects: pulls %.0f MB/s (same-host path %s, loans %s),"
                                        + " memory copy %.0f MB/s%n", mode.trim(), size(bytes), pulled / 1e6,
                                "false".equals(System.getProperty("croupier.pull.sameHost")) ? "off" : "on",
                                "false".equals(System.getProperty("croupier.pull.lend"))
                                        || "false".equals(System.getProperty("croupier.pull.sameHost")) ? "off" : "on",
                                copyRate(bytes) / 1e6);
                    }
                }
            }
        } finally {
            try (var paths = Files.walk(work)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** {@code bytes} as the largest whole unit: 64 KiB, 1 MiB. */
    private static String size(long bytes) {
        return bytes % (1L << 20) == 0 ? (bytes >> 20) + " MiB" : bytes % 1024 == 0 ? (bytes >> 10) + " KiB" : bytes + " B";
    }

    /**
     * Two node processes of one mode and how a driver reaches them. Nodes of {@code processes}
     * belong to the driver; the others are launched here and stopped (SIGTERM) on close.
     */
    private record SecuredNodes(String mode, List<Process> launched, List<String> addresses, Path token,
                                Path authority) implements AutoCloseable {

        static SecuredNodes start(String mode, Path work) throws IOException, InterruptedException {
            if (mode.equals("processes")) {
                return new SecuredNodes(mode, List.of(), List.of(), null, null);
            }
            List<String> flags = new ArrayList<>(List.of("--port", "0", "--cpus", "1", "--store-memory", "512m",
                    "--spill-dir", work.toString()));
            Path token = null;
            Path authority = null;
            switch (mode) {
                case "plain" -> { }
                case "token" -> {
                    token = Files.writeString(work.resolve("token"), "transfer-benchmark-token");
                    flags.addAll(List.of("--token-file", token.toString()));
                }
                case "tls" -> {
                    authority = certificates(work);
                    flags.addAll(List.of("--tls-cert", work.resolve("node.pem").toString(), "--tls-key",
                            work.resolve("node.key").toString(), "--tls-ca", authority.toString()));
                }
                default -> throw new IllegalArgumentException("mode '" + mode
                        + "' is not processes, plain, token or tls");
            }
            List<Process> launched = new ArrayList<>();
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                List<String> command = new ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
                command.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
                command.addAll(List.of("-cp", System.getProperty("java.class.path"),
                        dev.croupier.futures.NodeServer.class.getName()));
                command.addAll(flags);
                Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                launched.add(p);
                String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                        java.nio.charset.StandardCharsets.UTF_8)).readLine();
                if (line == null || !line.startsWith(dev.croupier.futures.NodeServer.READY)) {
                    launched.forEach(Process::destroyForcibly);
                    throw new IllegalStateException("node " + i + " of mode " + mode + " did not start: " + line);
                }
                addresses.add(line.substring(dev.croupier.futures.NodeServer.READY.length()).trim());
            }
            return new SecuredNodes(mode, launched, addresses, token, authority);
        }

        Cluster driver() {
            if (launched.isEmpty()) {
                return Cluster.builder().processes(2).cpusPerNode(1).objectStoreBytes(512L << 20).start();
            }
            Cluster.Builder b = Cluster.builder().connect(addresses.toArray(String[]::new));
            if (token != null) {
                b.tokenFile(token);
            }
            if (authority != null) {
                b.tlsAuthority(authority);
            }
            return b.start();
        }

        @Override
        public void close() throws InterruptedException {
            launched.forEach(Process::destroy);
            for (Process p : launched) {
                if (!p.waitFor(15, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }

        /** A CA and a node certificate for 127.0.0.1 signed by it, made with openssl; returns the CA. */
        private static Path certificates(Path work) throws IOException, InterruptedException {
            openssl(work, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                    "-days", "1", "-subj", "/CN=croupier-benchmark-ca");
            openssl(work, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
                    "-subj", "/CN=127.0.0.1");
            Files.writeString(work.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
            openssl(work, "x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", "node.pem", "-days", "1", "-extfile", "san.ext");
            return work.resolve("ca.pem");
        }

        private static void openssl(Path work, String... args) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of("openssl"));
            command.addAll(List.of(args));
            Process p = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IOException(String.join(" ", command) + ": " + out);
            }
        }
    }

    /**
     * Bytes per second of {@code count} pulls of {@code bytes}-sized objects from node 0 to
     * node 1: one task on node 1 reads a batch of fresh objects made on node 0 (made, and
     * waited for, outside the timing), so the task's own dispatch is spread over the batch and
     * no copy from an earlier batch is found on node 1.
     */
    static double pullRate(Cluster c, long bytes, int count) {
        int batch = (int) Math.max(1, Math.min(count, (128L << 20) / bytes));
        long nanos = 0;
        long moved = 0;
        for (int done = 0; done < count; done += batch) {
            List<ObjectRef<MemorySegment>> sources = new ArrayList<>(batch);
            for (int i = 0; i < batch; i++) {
                sources.add(c.task((Long n) -> {
                    MemorySegment out = TaskOutput.allocate(n);
                    out.fill((byte) 7);
                    return out;
                }, bytes).onNode(0, Affinity.HARD).remote());
            }
            sources.forEach(r -> r.whenDone().join());
            long start = System.nanoTime();
            ObjectRef<Long> read = c.task((List<MemorySegment> all) -> {
                long total = 0;
                for (MemorySegment s : all) {
                    total += s.get(ValueLayout.JAVA_BYTE, s.byteSize() - 1) + s.byteSize();
                }
                return total;
            }, ObjectRef.all(sources)).onNode(1, Affinity.HARD).remote();
            long value = read.get();
            nanos += System.nanoTime() - start;
            if (value != (bytes + 7) * batch) {
                throw new IllegalStateException("read " + value + " for " + batch + " objects of " + bytes + " bytes");
            }
            moved += bytes * batch;
            read.release();
            sources.forEach(ObjectRef::release);
        }
        return moved / (nanos / 1e9);
    }

    /** Bytes per second of copying {@code bytes} between two warm off-heap buffers. */
    static double copyRate(long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(bytes, 4096);
            MemorySegment b = arena.allocate(bytes, 4096);
            a.fill((byte) 1);
            b.fill((byte) 2);
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 20; i++) {
                long start = System.nanoTime();
                MemorySegment.copy(a, 0, b, 0, bytes);
                best = Math.min(best, System.nanoTime() - start);
            }
            return bytes / (best / 1e9);
        }
    }

    /** iperf3's loopback figure, or why there is none. */
    static String iperf3() throws IOException, InterruptedException {
        int port = 5299;
        Process server;
        try {
            server = new ProcessBuilder("iperf3", "-s", "-1", "-p", Integer.toString(port), "-B", "127.0.0.1")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            return "not measured (iperf3 is not installed: apt-get install iperf3)";
        }
        Thread.sleep(500);
        Process client = new ProcessBuilder("iperf3", "-c", "127.0.0.1", "-p", Integer.toString(port), "-t", "5", "-f", "m")
                .redirectErrorStream(true).start();
        String out = new String(client.getInputStream().readAllBytes());
        client.waitFor(30, TimeUnit.SECONDS);
        server.destroy();
        String receiver = out.lines().filter(l -> l.contains("receiver")).findFirst().orElse(out);
        return receiver.trim();
    }
}
