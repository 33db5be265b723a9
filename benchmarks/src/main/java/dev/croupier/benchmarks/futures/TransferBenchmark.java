package dev.croupier.benchmarks.futures;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskOutput;
import java.io.IOException;
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
 *     [object sizes in MiB = 1,64] [GiB moved per size = 2]
 * </pre>
 *
 * One consumer task reads a batch of objects (up to 128 MiB), one pull after another, as a
 * reducer reads its blocks; the figure includes that task's dispatch and outcome. The stream
 * alone is measured with {@code -Dcroupier.pull.sameHost=false}, which the node processes
 * inherit.
 */
public final class TransferBenchmark {

    private TransferBenchmark() {}

    public static void main(String[] args) throws Exception {
        String[] sizes = (args.length > 0 ? args[0] : "1,64").split(",");
        double gib = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        System.out.printf("loopback TCP (iperf3, 1 stream): %s%n", iperf3());
        try (Cluster c = Cluster.builder().processes(2).cpusPerNode(1).objectStoreBytes(512L << 20).start()) {
            for (String s : sizes) {
                long bytes = Long.parseLong(s.trim()) << 20;
                int count = (int) Math.max(4, (long) (gib * (1L << 30)) / bytes);
                pullRate(c, bytes, Math.min(count, 8)); // warm-up
                double pulled = pullRate(c, bytes, count);
                System.out.printf("%4d MiB objects: pulls %.0f MB/s (same-host path %s), memory copy %.0f MB/s%n",
                        bytes >> 20, pulled / 1e6,
                        "false".equals(System.getProperty("croupier.pull.sameHost")) ? "off" : "on",
                        copyRate(bytes) / 1e6);
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
