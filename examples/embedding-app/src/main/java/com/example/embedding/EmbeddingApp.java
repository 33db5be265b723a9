package com.example.embedding;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/** An application that shuffles byte[] blocks with Croupier, on an embedded cluster or on node processes. */
public final class EmbeddingApp {

    /** Bytes and their sum before and after the shuffle, and bytes the nodes' stores spilled. */
    public record Result(long bytesIn, long sumIn, long bytesOut, long sumOut, long bytesSpilled) {}

    public static void main(String[] args) {
        System.out.println(shuffle(48, 0));
    }

    /**
     * Shuffles {@code mib} 1 MiB blocks of random bytes on 3 nodes whose 8 MiB stores must
     * spill: nodes in this JVM, or as many node processes as {@code processes} says.
     */
    public static Result shuffle(int mib, int processes) {
        Cluster.Builder nodes = Cluster.builder().objectStoreBytes(8L << 20);
        try (Cluster cluster = (processes > 0 ? nodes.processes(processes) : nodes.nodes(3)).start()) {
            List<ObjectRef<byte[]>> blocks = new ArrayList<>();
            long sumIn = 0;
            for (int i = 0; i < mib; i++) {
                byte[] block = new byte[1 << 20];
                new SplittableRandom(i).nextBytes(block);
                sumIn += sum(block);
                blocks.add(cluster.put(block));
            }
            List<long[]> outputs = ShuffleJob.<byte[], byte[], long[]>builder()
                    .inputs(blocks)
                    .mapper((block, n) -> IntStream.range(0, n)      // slice p of every block goes to reducer p
                            .mapToObj(p -> Arrays.copyOfRange(block, p * block.length / n, (p + 1) * block.length / n))
                            .toList())
                    .reducer((p, slices) -> new long[] {             // {bytes, sum of bytes} of partition p
                        slices.stream().mapToLong(s -> s.length).sum(),
                        slices.stream().mapToLong(EmbeddingApp::sum).sum()})
                    .partitions(8)
                    .build().run(cluster).values();
            long spilled = cluster.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
            return new Result((long) mib << 20, sumIn, outputs.stream().mapToLong(o -> o[0]).sum(),
                    outputs.stream().mapToLong(o -> o[1]).sum(), spilled);
        }
    }

    static long sum(byte[] bytes) {
        long sum = 0;
        for (byte b : bytes) {
            sum += b & 0xff;
        }
        return sum;
    }
}
