package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.internal.EventLoopThreads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same {@link Cluster} over node processes: random DAGs give the sequential answer, values
 * of every kind travel both ways, two drivers share nodes started by hand, a killed node's work
 * is rebuilt, and what cannot work is refused with its cause named.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ProcessClusterTest {

    @TempDir
    Path spill;

    private Cluster.Builder processes(int n) {
        return Cluster.builder().processes(n).cpusPerNode(2).objectStoreBytes(32L << 20).spillDirectory(spill);
    }

    @Test
    void randomDagsOnThreeProcessesGiveTheSequentialAnswer() {
        try (Cluster c = processes(3).start()) {
            assertEquals(List.of(0, 1, 2), c.aliveNodes());
            for (long seed = 1; seed <= 4; seed++) {
                RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(120, seed);
                assertDagAnswers(c, dag);
            }
            assertTrue(c.stats().totalTasks() >= 480, c.stats().toString());
        }
    }

    static void assertDagAnswers(Cluster c, RandomDagProperties.Dag dag) {
        long[][] expected = dag.evaluate();
        List<List<ObjectRef<Object>>> refs = new ArrayList<>();
        for (int i = 0; i < dag.tasks.size(); i++) {
            refs.add(RandomDagProperties.submit(c, dag, refs, i));
        }
        for (int i = 0; i < dag.tasks.size(); i++) {
            for (int j = 0; j < expected[i].length; j++) {
                assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()), "task " + i);
            }
        }
        refs.forEach(r -> r.forEach(ObjectRef::release));
    }

    @Test
    void valuesTravelBothWaysAndSegmentsArriveWhole() {
        try (Cluster c = processes(2).start()) {
            byte[] big = new byte[5 << 20];
            for (int i = 0; i < big.length; i++) {
                big[i] = (byte) (i * 31);
            }
            ObjectRef<byte[]> put = c.put(big);
            ObjectRef<MemorySegment> doubled = c.task((byte[] b) -> {
                MemorySegment out = TaskOutput.allocate(b.length * 2L);
                MemorySegment.copy(MemorySegment.ofArray(b), 0, out, 0, b.length);
                MemorySegment.copy(MemorySegment.ofArray(b), 0, out, b.length, b.length);
                return out;
            }, put).onNode(1, Affinity.HARD).remote();
            ObjectRef<Long> sum = c.task((MemorySegment s) -> {
                long total = 0;
                for (long i = 0; i < s.byteSize(); i++) {
                    total += s.get(ValueLayout.JAVA_BYTE, i);
                }
                return total;
            }, doubled).onNode(0, Affinity.HARD).remote();
            long expected = 0;
            for (byte b : big) {
                expected += 2L * b;
            }
            assertEquals(expected, sum.get());
            assertArrayEquals(big, put.get());
            MemorySegment back = doubled.get();
            assertEquals(2L * big.length, back.byteSize());
            assertEquals(big[12345], back.get(ValueLayout.JAVA_BYTE, big.length + 12345L));
            assertEquals("ab", c.task((String a, String b) -> a + b, "a", "b").remote().get());
        }
    }

    /**
     * Closing a driver's process cluster ends the event loop threads under its channels: a
     * JVM that exits while a thread waits in {@code epoll_wait} waits 300 ms for it.
     */
    @Test
    void closeEndsTheDriversEventLoopThreads() throws Exception {
        List<Thread> loops;
        try (Cluster c = processes(1).start()) {
            assertEquals(3, c.task(() -> 3).remote().get());
            loops = EventLoopThreads.live("croupier-driver-io");
            assertFalse(loops.isEmpty(), "the driver's channels run on its own loops");
        }
        EventLoopThreads.assertEnded(loops);
    }

    /**
     * Node processes on one host lend each other their objects: a task reads an argument that
     * another node holds where it lies, in that node's memory, so nothing is copied; and the
     * loan ends with the task, so the holder frees the object once its refs are released.
     */
    @Test
    void anArgumentAnotherNodeOnThisHostHoldsIsReadInPlaceAndFreedAfter() throws InterruptedException {
        try (Cluster c = processes(2).objectStoreBytes(128L << 20).start()) {
            long bytes = 48L << 20;
            ObjectRef<MemorySegment> big = pagesNumbered(c, 0, bytes);
            big.whenDone().join();
            List<ObjectRef<Long>> readers = List.of(sumOfPages(c, 1, big), sumOfPages(c, 1, big));
            for (ObjectRef<Long> r : readers) {
                assertEquals(sumOfPages(bytes), r.get());
                r.release();
            }
            assertEquals(0, c.stats().nodes().get(1).bytesFetched(), "node 1 copied nothing");
            assertTrue(c.stats().nodes().get(0).bytesInMemory() >= bytes);
            big.release();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.stats().nodes().get(0).bytesInMemory() >= bytes && System.nanoTime() < deadline) {
                Thread.sleep(20); // the driver frees asynchronously
            }
            assertTrue(c.stats().nodes().get(0).bytesInMemory() < bytes,
                    "the holder freed the object once the loans ended: " + c.stats().nodes().get(0));
        }
    }

    /**
     * A stored argument under the loan bound is copied out of its holder's memory, without a
     * call, rather than borrowed with one; the bytes read are the holder's either way.
     */
    @Test
    void aStoredArgumentUnderTheLoanBoundIsCopiedNotBorrowed() {
        try (Cluster c = processes(2).objectStoreBytes(64L << 20).start()) {
            long bytes = 256L << 10;
            assertEquals(sumOfPages(bytes), sumOfPages(c, 1, pagesNumbered(c, 0, bytes)).get());
            long fetched = c.stats().nodes().get(1).bytesFetched();
            assertTrue(fetched >= bytes && fetched < 2 * bytes, "node 1 copied the object (its frame): " + fetched);
        }
    }

    /** An object of {@code bytes} made on node {@code node}, each 4 KiB page's first byte its page number. */
    private static ObjectRef<MemorySegment> pagesNumbered(Cluster c, int node, long bytes) {
        return c.task((Long n) -> {
            MemorySegment out = TaskOutput.allocate(n);
            for (long i = 0; i < n; i += 4096) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) (i >>> 12));
            }
            return out;
        }, bytes).onNode(node, Affinity.HARD).remote();
    }

    /** The sum of the pages' first bytes of {@code object}, read by a task on node {@code node}. */
    private static ObjectRef<Long> sumOfPages(Cluster c, int node, ObjectRef<MemorySegment> object) {
        return c.task((MemorySegment s) -> {
            long sum = 0;
            for (long b = 0; b < s.byteSize(); b += 4096) {
                sum += s.get(ValueLayout.JAVA_BYTE, b);
            }
            return sum;
        }, object).onNode(node, Affinity.HARD).remote();
    }

    /** What {@link #sumOfPages(Cluster, int, ObjectRef)} gives for an object {@link #pagesNumbered} made. */
    private static long sumOfPages(long bytes) {
        long sum = 0;
        for (long i = 0; i < bytes; i += 4096) {
            sum += (byte) (i >>> 12);
        }
        return sum;
    }

    @Test
    void aTaskThatThrowsFailsWithItsExceptionAndDependentsFail() {
        try (Cluster c = processes(2).start()) {
            ObjectRef<Integer> bad = c.task((Fn0<Integer>) () -> {
                throw new IllegalStateException("no luck");
            }).name("unlucky").remote();
            TaskFailedException e = assertThrows(TaskFailedException.class, bad::get);
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
            assertEquals("no luck", e.getCause().getMessage());
            ObjectRef<Integer> after = c.task((Integer x) -> x + 1, bad).remote();
            assertThrows(TaskFailedException.class, after::get);
        }
    }

    @Test
    void aKilledNodeProcessLosesNothing() {
        try (Cluster c = processes(3).start()) {
            RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(150, 7);
            long[][] expected = dag.evaluate();
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < dag.tasks.size(); i++) {
                refs.add(RandomDagProperties.submit(c, dag, refs, i));
                if (i == 75) {
                    c.killNode(1);
                }
            }
            for (int i = 0; i < dag.tasks.size(); i++) {
                for (int j = 0; j < expected[i].length; j++) {
                    assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()), "task " + i);
                }
            }
            assertEquals(List.of(0, 2), c.aliveNodes());
            c.restartNode(1);
            assertEquals(List.of(0, 1, 2), c.aliveNodes());
            assertEquals(42, c.task(() -> 42).onNode(1, Affinity.HARD).remote().get());
        }
    }

    @Test
    void nodesStartedByHandServeTwoDriversAtOnce() throws Exception {
        List<Process> nodes = new ArrayList<>();
        try {
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Process p = new ProcessBuilder(javaCommand("--port", "0", "--cpus", "2", "--store-memory", "32m",
                        "--spill-dir", spill.toString())).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                nodes.add(p);
                addresses.add(readyAddress(p));
            }
            String cluster = String.join(",", addresses);
            List<CompletableFuture<Void>> drivers = new ArrayList<>();
            for (long seed = 11; seed <= 12; seed++) {
                long s = seed;
                drivers.add(CompletableFuture.runAsync(() -> {
                    try (Cluster c = Cluster.connect(cluster)) {
                        assertDagAnswers(c, RandomDagProperties.Dag.random(100, s));
                    }
                }));
            }
            CompletableFuture.allOf(drivers.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
        } finally {
            nodes.forEach(Process::destroyForcibly);
        }
    }

    /**
     * The first use of a Flight Recorder event class starts the recorder's Java side, in the
     * interpreter, whether or not anything records: a node that serves a driver, runs tasks,
     * spills and restores without a recording never starts it, nor does gRPC's Netty, which
     * announces each pooled chunk as an event.
     */
    @Test
    void aNodeThatIsNotRecordingNeverStartsTheFlightRecorder() throws Exception {
        Path classLog = spill.resolve("classes.log");
        List<String> cmd = javaCommand("--port", "0", "--cpus", "1", "--store-memory", "32m",
                "--spill-dir", spill.toString());
        cmd.add(1, "-Xlog:class+load=info:file=" + classLog);
        Process node = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Cluster c = Cluster.connect(readyAddress(node))) {
            long bytes = 8L << 20;
            List<ObjectRef<MemorySegment>> made = new ArrayList<>();
            for (int i = 0; i < 6; i++) { // 48 MiB in a 32 MiB store: the early ones spill
                made.add(pagesNumbered(c, 0, bytes));
            }
            c.wait(made, made.size(), java.time.Duration.ofSeconds(60));
            for (ObjectRef<MemorySegment> object : made) { // and are restored to be read
                assertEquals(sumOfPages(bytes), sumOfPages(c, 0, object).get());
            }
            ClusterStats.NodeStats node0 = c.stats().nodes().getFirst();
            assertTrue(node0.bytesSpilled() > 0 && node0.bytesRestored() > 0, "objects spilled and were restored");
        } finally {
            node.destroy();
            assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node stops on SIGTERM");
        }
        String classes = java.nio.file.Files.readString(classLog);
        assertTrue(classes.contains("netty.buffer.PooledByteBufAllocator "), "the node allocated pooled buffers");
        assertFalse(classes.contains("jdk.jfr.internal.MetadataRepository "), "the node started the Flight Recorder");
    }

    /** The address a node started by hand prints on its first line, once it serves. */
    private static String readyAddress(Process node) throws IOException {
        String line = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        assertTrue(line != null && line.startsWith(NodeServer.READY), String.valueOf(line));
        return line.substring(NodeServer.READY.length());
    }

    static List<String> javaCommand(String... nodeArgs) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NodeServer.class.getName()));
        cmd.addAll(List.of(nodeArgs));
        return cmd;
    }

    @Test
    void aStoppedNodeMissesItsHeartbeatsAndItsWorkIsDoneElsewhere() throws Exception {
        // 1 s, half the default: at 500 ms a live node on a loaded 2-core machine was once
        // declared dead beside the stopped one
        try (Cluster c = processes(2).heartbeatTimeout(java.time.Duration.ofMillis(1000)).start()) {
            long pid = c.task(() -> ProcessHandle.current().pid()).onNode(1, Affinity.HARD).remote().get();
            RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(120, 21);
            long[][] expected = dag.evaluate();
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < dag.tasks.size(); i++) {
                refs.add(RandomDagProperties.submit(c, dag, refs, i));
                if (i == 60) {
                    // SIGSTOP: the connection stays open, the node says nothing more
                    assertEquals(0, new ProcessBuilder("bash", "-c", "kill -STOP " + pid).start().waitFor());
                }
            }
            for (int i = 0; i < dag.tasks.size(); i++) {
                for (int j = 0; j < expected[i].length; j++) {
                    assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()), "task " + i);
                }
            }
            assertEquals(List.of(0), c.aliveNodes(), "the silent node is dead to the driver");
            ClusterStats.Failures failures = c.stats().failures();
            assertEquals(1, failures.nodesLost(), failures.toString());
            assertEquals(failures.retriedTasks(), c.stats().tasks().stream().mapToLong(ClusterStats.TaskStats::retried)
                    .sum(), "the retries, by task name, add up");
            assertTrue(failures.detectionSeconds().getFirst() >= 1.0,
                    "declared dead only once silent for the timeout: " + failures);
            ProcessHandle.of(pid).ifPresent(h -> h.onExit().join()); // the driver killed its silent node
        }
    }

    @Test
    void nodeProcessesEndWithADriverKilledWithSigkill() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), KilledDriverMain.class.getName()));
        Process driver = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String line = new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertEquals("running", line);
            List<ProcessHandle> nodes = driver.toHandle().children().toList();
            assertEquals(1, nodes.size(), "the driver started one node process");
            driver.destroyForcibly();
            nodes.getFirst().onExit().get(60, TimeUnit.SECONDS);
            assertTrue(!nodes.getFirst().isAlive());
        } finally {
            driver.destroyForcibly();
        }
    }

    @Test
    void anUnreachableNodeIsNamed() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        CroupierException e = assertThrows(CroupierException.class, () -> Cluster.connect("127.0.0.1:" + port));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
    }

    /** Not Serializable: on a node it can only be encoded by the codec the driver ships. */
    record Point(int x, int y) {}

    static final class PointCodec implements Codec<Point>, java.io.Serializable {
        @Override
        public long encodedSize(Point p) {
            return 8;
        }

        @Override
        public void encode(Point p, MemorySegment out) {
            out.set(ValueLayout.JAVA_INT_UNALIGNED, 0, p.x());
            out.set(ValueLayout.JAVA_INT_UNALIGNED, 4, p.y());
        }

        @Override
        public Point decode(MemorySegment in) {
            return new Point(in.get(ValueLayout.JAVA_INT_UNALIGNED, 0), in.get(ValueLayout.JAVA_INT_UNALIGNED, 4));
        }
    }

    @Test
    void codecsTravelToTheNodes() {
        try (Cluster c = processes(2).codec(Point.class, new PointCodec()).start()) {
            ObjectRef<Point> made = c.task((Integer x) -> new Point(x, x + 1), 3).onNode(0, Affinity.HARD).remote();
            ObjectRef<Integer> read = c.task((Point p) -> p.x() * 10 + p.y(), made).onNode(1, Affinity.HARD).remote();
            assertEquals(new Point(3, 4), made.get());
            assertEquals(34, read.get());
        }
    }

    static final class Unserializable {
        int value = 3;
    }

    @Test
    void aFunctionThatCannotTravelIsRefusedAtSubmissionNamingTheClass() {
        try (Cluster c = processes(1).start()) {
            Unserializable captured = new Unserializable();
            CroupierException e = assertThrows(CroupierException.class,
                    () -> c.task(() -> captured.value).name("captures").remote());
            assertEquals(ErrorCode.BAD_INPUT, e.code());
            assertTrue(e.getMessage().contains("captures") && e.getMessage().contains(Unserializable.class.getName()),
                    e.getMessage());
        }
    }

    /**
     * A node process that cannot start (here: its spill folder is a file) exits at once; the
     * driver says so, with the node's own line naming the folder, instead of waiting for a
     * node that will never be ready.
     */
    @Test
    @Timeout(value = 50, unit = TimeUnit.SECONDS)
    void aNodeProcessThatExitsBeforeItIsReadyIsNamedWithItsReason() throws IOException {
        Path aFile = java.nio.file.Files.createFile(spill.resolve("not-a-folder"));
        CroupierException e = assertThrows(CroupierException.class,
                () -> Cluster.builder().processes(1).objectStoreBytes(32L << 20).spillDirectory(aFile).start());
        assertTrue(e.getMessage().startsWith("node process 0 exited with status 1 before it was ready"),
                e.getMessage());
        assertTrue(e.getMessage().contains("spill folder " + aFile + " cannot hold"), e.getMessage());
    }
}
