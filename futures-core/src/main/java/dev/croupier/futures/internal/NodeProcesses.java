package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.NodeServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Node processes a driver starts on this machine ({@code Cluster.builder().processes(n)},
 * {@code --processes N}): each is this JVM's {@code java} with the same class path and JVM
 * flags, running {@code NodeServer} on a free loopback port. A node is ready when it prints its
 * address; its error output goes to a log file named in any failure. Each node watches this
 * process ({@code --parent}) and stops when it ends, so a driver killed with SIGKILL leaves no
 * node running. Thread-safe.
 */
final class NodeProcesses implements AutoCloseable {

    /** Longest a node may take from launch to its ready line. */
    private static final long START_SECONDS = 60;
    /** Longest a node whose output ended before its ready line may take to exit. */
    private static final long EXIT_SECONDS = 5;

    /** Each node's CPU slots, by node id. */
    private final java.util.function.IntUnaryOperator cpus;
    /** Whether the run's JVMs (its nodes and the driver) outnumber this machine's processors. */
    private final boolean crowded;
    private final long storeBytes;
    private final Path memoryDirectory;
    private final Path spillDirectory;
    private final Path tokenFile;
    private final dev.croupier.objectstore.TemporaryClaim logs;
    private final Map<Integer, Process> byId = new ConcurrentHashMap<>();
    /** The cache node 0 of this run writes when it exits, under a name of its own, and where it goes. */
    private Path training;
    private Path trained;
    /** The node writing {@link #training}, and whether it served: a cache of a failed start is not kept. */
    private volatile Process trainer;
    private volatile boolean trainerServed;
    /** Set when a node failed to start: its log, which the error names, outlives close. */
    private volatile boolean keepLogs;

    NodeProcesses(int nodes, java.util.function.IntUnaryOperator cpus, long storeBytes, Path memoryDirectory,
                  Path spillDirectory, Path tokenFile) {
        this.tokenFile = tokenFile;
        this.cpus = cpus;
        this.crowded = nodes + 1 > Runtime.getRuntime().availableProcessors();
        this.storeBytes = storeBytes;
        this.memoryDirectory = memoryDirectory;
        this.spillDirectory = spillDirectory;
        try {
            this.logs = dev.croupier.objectstore.TemporaryClaim.folder(Path.of(System.getProperty("java.io.tmpdir")), "croupier-node-logs-");
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.UNAVAILABLE, "cannot create a folder for node logs: " + e.getMessage(), e);
        }
    }

    /** Launches node {@code id} and returns its address once it serves. */
    String start(int id) {
        return awaitReady(id, launch(id));
    }

    /** Launches nodes 0 to {@code n - 1} at once, then returns their addresses once each serves. */
    List<String> startAll(int n) {
        List<Process> launched = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            launched.add(launch(i));
        }
        List<String> addresses = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            addresses.add(awaitReady(i, launched.get(i)));
        }
        return addresses;
    }

    /**
     * The driver's JVM flags as a node's: without a debugger agent, without what places the
     * driver's own modules (a node runs on the class path, whichever path the driver's application
     * uses), and without the driver's ahead-of-time cache, the flags it runs from it with
     * ({@link #FROM_CACHE}, but the unlocking of experimental flags, which others may need), or its
     * class-data archive, which describe the driver's run (a node records or reads its own,
     * {@link #aheadOfTimeCache}; several nodes recording into the driver's one file would corrupt
     * it), nor the quiet the launcher asks of a recording run (a node's log keeps what its VM
     * prints), nor the driver's grant of native access: a node's is to the class path, always. A
     * node runs the throughput collector unless the driver's flags choose one: its data lives in
     * its store, and under G1 the kernels' arrays of a few MiB are humongous objects that start
     * concurrent cycles on the task's cores (docs/benchmarks.md). On a {@code crowded} machine a
     * node also compiles less ({@link #FEWER_COMPILES}) unless the driver's flags set the JIT's
     * thresholds. A node also gets what keeps its log free of notices ({@link #QUIET}): a driver
     * started with no flags would give its nodes none, and a node killed with {@code kill -9}
     * writes no line of its own, so the loss's message would quote a JDK or SLF4J notice as the
     * node's last word.
     */
    static List<String> nodeFlags(List<String> driverFlags, boolean crowded) {
        List<String> out = new ArrayList<>(driverFlags.size());
        for (String flag : driverFlags) {
            if (flag.startsWith("-XX:AOTMode") || flag.startsWith("-XX:AOTConfiguration")
                    || flag.startsWith("-XX:AOTCache") || flag.startsWith("-XX:SharedArchiveFile")
                    || FROM_CACHE.contains(flag) && !flag.startsWith("-XX:+Unlock")
                    || flag.equals("-XX:-DisplayVMOutput") || flag.startsWith("-Xlog:aot")) {
                continue;
            }
            if (flag.startsWith("-agentlib:jdwp") || flag.startsWith("-Xrunjdwp")
                    || flag.startsWith("--module-path") || flag.startsWith("--upgrade-module-path")
                    || flag.startsWith("--add-modules") || flag.startsWith("--limit-modules")
                    || flag.startsWith("--patch-module") || flag.startsWith("--add-reads")
                    || flag.startsWith("-Djdk.module.")
                    || (flag.startsWith("--add-opens") || flag.startsWith("--add-exports"))
                            && !flag.endsWith("ALL-UNNAMED")) {
                continue;
            }
            if (flag.startsWith("--enable-native-access")) {
                continue; // it names the driver's modules; a node runs on the class path ({@link #QUIET})
            }
            out.add(flag);
        }
        if (out.stream().noneMatch(f -> f.matches("-XX:\\+Use\\w+GC"))) {
            out.add("-XX:+UseParallelGC");
        }
        for (String quiet : QUIET) {
            String option = quiet.substring(0, quiet.indexOf('=') + 1);
            if (out.stream().noneMatch(f -> f.startsWith(option))) {
                out.add(quiet);
            }
        }
        if (crowded && out.stream().noneMatch(f -> f.startsWith("-XX:Tier"))) {
            out.addAll(FEWER_COMPILES);
        }
        return out;
    }

    /**
     * Flags a node gets unless the driver's set the same option (native access, whatever the
     * driver's grant): the native access its store uses, and the memory access of
     * {@code sun.misc.Unsafe} its libraries make (gRPC's Netty, Chronicle), each of which JDK 25
     * otherwise announces on the node's standard error, and SLF4J's report that no logging
     * backend is on the class path (Chronicle's; a node logs through {@link System.Logger}).
     */
    static final List<String> QUIET = List.of("--enable-native-access=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow", "-Dslf4j.internal.verbosity=ERROR");

    /**
     * JIT thresholds of a node when the run's JVMs outnumber the machine's processors: a method
     * is compiled with profiling (tier 3) after ten times the JVM's default calls, and optimized
     * (tier 4) after ten times; loops still compile on the default back-edge counts, so the
     * kernels' long loops are optimized as soon as before. Each node JVM compiles what it runs
     * for itself, and on a crowded machine its compiler threads take the cores its tasks and the
     * other nodes need: three nodes of a 1 GB sort on 2 cores compiled some 2,500 methods each,
     * most of them lukewarm gRPC and runtime code, and spent more CPU compiling than sorting.
     * With these, the sort took 0.5-1.2 s less in four alternating rounds of five, its CPU
     * 0.6-2.0 s less (docs/benchmarks.md, "Nodes that compile less"). With processors to spare,
     * compiling early costs nothing and the JVM's defaults stay. The build writes the list (the
     * parent POM's {@code croupier.jvm.fewer.compiles}), which {@code bin/croupier} reads too.
     */
    static final List<String> FEWER_COMPILES = flagsResource("fewer-compiles.flags");

    /** The flags in resource {@code name}, which the build writes from a property of the parent POM. */
    private static List<String> flagsResource(String name) {
        try (java.io.InputStream in = NodeProcesses.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the futures-core jar");
            }
            return List.of(new String(in.readAllBytes(), StandardCharsets.UTF_8).trim().split("\\s+"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A node's class path: the driver's class path, then its module path (its modules as plain jars). */
    static String nodeClassPath(String classPath, String modulePath) {
        return java.util.stream.Stream.of(classPath, modulePath)
                .filter(p -> p != null && !p.isEmpty())
                .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
    }

    private Process launch(int id) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> flags = nodeFlags(ManagementFactory.getRuntimeMXBean().getInputArguments(), crowded);
        command.addAll(flags);
        String classPath = nodeClassPath(System.getProperty("java.class.path"), System.getProperty("jdk.module.path"));
        List<String> cache = aheadOfTimeCache(id, flags, classPath);
        command.addAll(cache);
        command.add("-cp");
        command.add(classPath);
        command.add("dev.croupier.futures.NodeServer");
        command.addAll(List.of("--port", "0", "--cpus", Integer.toString(cpus.applyAsInt(id)),
                "--store-memory", Long.toString(storeBytes),
                "--parent", Long.toString(ProcessHandle.current().pid()),
                // it serves this driver only, which stops it when it needs it no more
                "--drain-seconds", "0"));
        if (spillDirectory != null) {
            command.addAll(List.of("--spill-dir", spillDirectory.toString()));
        }
        if (memoryDirectory != null) {
            command.addAll(List.of("--memory-dir", memoryDirectory.toString()));
        }
        if (tokenFile != null) {
            command.addAll(List.of("--token-file", tokenFile.toString())); // else CROUPIER_TOKEN is inherited
        }
        Path log = logs.path().resolve("node-" + id + ".log");
        try {
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            if (cache.stream().anyMatch(f -> f.startsWith("-XX:AOTCacheOutput"))) {
                trainer = p;
            }
            Process previous = byId.put(id, p);
            if (previous != null) {
                previous.destroyForcibly(); // an earlier incarnation that went silent
            }
            return p;
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.UNAVAILABLE, "cannot start node process " + id + ": " + e.getMessage(), e);
        }
    }

    /**
     * Flags that start a node from an ahead-of-time cache of its classes, linked, with the method
     * profiles of a run (JDK 25's {@code AOTCache}): a node then loads no class from its jars and
     * compiles its hot methods from the first task on, instead of warming up in every run
     * ({@link #FROM_CACHE}). The first node of a run without a cache records one
     * ({@code AOTCacheOutput}), which its JVM writes when it exits, under a name of its own that
     * {@link #close} renames into place; every later run reads it. The name depends on the JDK,
     * the flags and the class path with each jar's size and time, so a new build trains a new
     * cache; the {@value #CACHES_KEPT} most recently used are kept. None if the node's flags
     * choose how class data is shared ({@code -Xshare}), or if its class path has a class folder
     * (a build's tests).
     */
    private synchronized List<String> aheadOfTimeCache(int id, List<String> flags, String classPath) {
        Path cache = cacheFile(Path.of(System.getProperty("java.io.tmpdir")), flags, classPath);
        if (cache == null) {
            return List.of();
        }
        if (Files.isRegularFile(cache)) {
            try {
                Files.setLastModifiedTime(cache, java.nio.file.attribute.FileTime.from(java.time.Instant.now()));
            } catch (IOException ignored) {
                // it only orders the caches that are kept
            }
            List<String> read = new ArrayList<>(List.of("-XX:AOTCache=" + cache));
            read.addAll(FROM_CACHE);
            return read;
        }
        if (id != 0 || training != null) {
            return List.of();
        }
        training = cache.resolveSibling(cache.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        trained = cache;
        return List.of("-XX:AOTCacheOutput=" + training);
    }

    /**
     * The cache file in {@code tmp} for nodes of these flags and class path, or null where
     * there can be none ({@code -Xshare}, a class folder). The name depends on the JDK, the
     * flags and each jar's size and time. {@code -XX:+UnlockDiagnosticVMOptions} and
     * {@code -XX:+UnlockExperimentalVMOptions} only unlock other flags, so they are left out: a
     * driver whose launcher is recording its own cache passes the first, one reading it the
     * second, and its nodes must find the same cache in either.
     */
    static Path cacheFile(Path tmp, List<String> flags, String classPath) {
        for (String flag : flags) {
            if (flag.startsWith("-Xshare")) {
                return null;
            }
        }
        List<String> keyed = flags.stream()
                .filter(f -> !f.equals("-XX:+UnlockDiagnosticVMOptions") && !f.equals("-XX:+UnlockExperimentalVMOptions"))
                .toList();
        StringBuilder key = new StringBuilder(System.getProperty("java.home")).append('\n').append(keyed);
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            java.io.File f = new java.io.File(entry);
            String[] inFolder = f.list();
            if (inFolder != null && inFolder.length > 0) {
                return null; // the JDK caches classes of jars only, and refuses a class path with a class folder
            }
            key.append('\n').append(entry).append(' ').append(f.length()).append(' ').append(f.lastModified());
        }
        return tmp.resolve(CACHE_PREFIX + Integer.toUnsignedString(key.toString().hashCode(), 36) + ".aot");
    }

    /** Whether {@code trainer}'s cache stands for a run: it served ({@code served}), then exited 0 as a stopped node does. */
    static boolean trainedWell(Process trainer, boolean served) {
        return trainer != null && served && !trainer.isAlive() && trainer.exitValue() == 0;
    }

    /**
     * Flags a node reading a cache gets on JDK 25, and a node recording one does not: compile
     * what the cache's training run compiled as soon as its class is ready
     * ({@code AOTCompileEagerly}, experimental in JDK 25, so named for it only), instead of once
     * each method is hot again; and keep C2 from loop optimizations whose traps had it compile
     * each sort kernel twice over ({@code -XX:-UseProfiledLoopPredicate -XX:-LoopUnswitching}).
     * A 1 GB in-memory sort on two node processes ran 10% faster with the first
     * (docs/benchmarks.md, "Compiled as the classes load"; "Loops compiled once"). The build
     * writes the list (the parent POM's {@code croupier.jvm.from.cache}), which
     * {@code bin/croupier} reads too, for the driver.
     */
    static final List<String> FROM_CACHE = Runtime.version().feature() == 25
            ? flagsResource("from-cache.flags") : List.of();

    /** Caches kept in the temporary folder: a few builds or class paths in turn. */
    private static final int CACHES_KEPT = 4;
    private static final String CACHE_PREFIX = "croupier-node-";

    /**
     * Moves the cache node 0 wrote into place, if it served and then exited as asked, and
     * deletes the least recently used beyond {@link #CACHES_KEPT}. A node that failed to start
     * still writes a cache when its JVM exits, of the little it ran; kept, it would stand for
     * every later run of the same build.
     */
    private synchronized void keepTrainedCache() {
        if (training == null) {
            return;
        }
        try {
            if (trainedWell(trainer, trainerServed) && Files.isRegularFile(training)) {
                Files.move(training, trained, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            Files.deleteIfExists(training.resolveSibling(training.getFileName() + ".config"));
            Files.deleteIfExists(training); // a node killed while writing it
            List<Path> caches;
            try (var files = Files.list(trained.getParent())) {
                caches = files.filter(f -> f.getFileName().toString().startsWith(CACHE_PREFIX)
                        && f.getFileName().toString().endsWith(".aot")).collect(java.util.stream.Collectors.toList());
            }
            caches.sort(java.util.Comparator.comparing((Path f) -> f.toFile().lastModified()).reversed());
            for (Path old : caches.subList(Math.min(CACHES_KEPT, caches.size()), caches.size())) {
                Files.deleteIfExists(old); // a node reading it keeps its mapping
            }
        } catch (IOException | java.io.UncheckedIOException ignored) {
            // without a cache the next run trains one
        } finally {
            training = null;
        }
    }

    private String awaitReady(int id, Process p) {
        Path log = logs.path().resolve("node-" + id + ".log");
        String[] address = new String[1];
        Thread reader = Thread.ofPlatform().daemon().start(() -> {
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith(NodeServer.READY)) {
                        address[0] = line.substring(NodeServer.READY.length()).trim();
                        return;
                    }
                }
            } catch (IOException ignored) {
                // the process ended; reported below
            }
        });
        try {
            reader.join(TimeUnit.SECONDS.toMillis(START_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (address[0] == null) {
            // Its output ended (it is exiting: a bad setting, a crash) or the wait did.
            String why = "did not become ready within " + START_SECONDS + " s";
            try {
                if (!reader.isAlive() && p.waitFor(EXIT_SECONDS, TimeUnit.SECONDS)) {
                    why = "exited with status " + p.exitValue() + " before it was ready";
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            p.destroyForcibly();
            keepLogs = true;
            throw new CroupierException(ErrorCode.UNAVAILABLE, "node process " + id + " " + why + "; its log: " + log
                    + tail(log));
        }
        if (p == trainer) {
            trainerServed = true;
        }
        // The node writes nothing more to its output; drain it anyway so it can never block.
        Thread.ofPlatform().daemon().name("croupier-node-" + id + "-stdout").start(() -> {
            try {
                p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException ignored) {
                // the node ended
            }
        });
        return address[0];
    }

    /** What a node's log says of why it ended ({@link #reason}), as a clause of an error; "" if nothing. */
    private static String tail(Path log) {
        try {
            String reason = reason(Files.readAllLines(log));
            return reason == null ? "" : "; it says: " + reason;
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * The line of a node's log that says why it ended: its own last ({@code croupier node: ...}),
     * else the last that is neither a stack frame nor a notice of the JVM's; null if none. A JVM
     * exiting with a cache to write starts another that announces its options
     * ({@code Picked up JAVA_TOOL_OPTIONS: ...}, the whole class path) after the node's line.
     */
    static String reason(List<String> lines) {
        String last = null;
        for (int i = lines.size() - 1; i >= 0; i--) {
            String line = lines.get(i);
            if (line.startsWith("croupier ")) {
                return line;
            }
            if (last == null && !line.isBlank() && !Character.isWhitespace(line.charAt(0))
                    && !line.startsWith("Picked up ")) {
                last = line;
            }
        }
        return last;
    }

    /** The process id of node {@code id}; -1 if it is not running. */
    long pid(int id) {
        Process p = byId.get(id);
        return p == null ? -1 : p.pid();
    }

    /**
     * Node {@code id} is lost to its driver: kills it if it still runs; if it had already ended
     * by itself, keeps its log and returns its exit code and the log's error line, else "".
     */
    String lose(int id) {
        Process p = byId.get(id);
        if (p == null) {
            return "";
        }
        try {
            p.waitFor(200, TimeUnit.MILLISECONDS); // a process that ended has its exit reaped by now
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (p.isAlive()) {
            kill(id);
            return "";
        }
        byId.remove(id);
        keepLogs = true;
        Path log = logs.path().resolve("node-" + id + ".log");
        return "; its process (pid " + p.pid() + ") had exited with code " + p.exitValue() + "; its log: " + log
                + tail(log);
    }

    /** Kills node {@code id} as {@code kill -9} would, and waits (up to 10 s) for it to end. */
    void kill(int id) {
        Process p = byId.remove(id);
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops every node: SIGTERM, then SIGKILL for any still running after 10 s (node 0 of a
     * run that trains the cache takes a few seconds to write it); keeps that cache; deletes
     * the nodes' logs unless a node failed to start, whose error names its log.
     */
    @Override
    public void close() {
        for (Process p : byId.values()) {
            p.destroy();
        }
        for (Process p : byId.values()) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        byId.clear();
        keepTrainedCache();
        if (!keepLogs) { // else kept, and claimed, while this process lives
            logs.close();
        }
    }
}
