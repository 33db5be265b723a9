package dev.croupier.futures;

import java.nio.file.Path;

/**
 * Small clusters for tests: little store memory, and spill files under the test's folder. They
 * share the driver's heap (not {@code serializing}): these tests observe tasks through latches
 * and counters, which a process cluster could not carry.
 */
final class TestClusters {
    private TestClusters() {}

    static Cluster.Builder small(int nodes, Path spill) {
        return Cluster.builder()
                .serializing(false)
                .nodes(nodes)
                .cpusPerNode(2)
                .objectStoreBytes(8L << 20)
                .spillDirectory(spill);
    }

    static Cluster start(int nodes, Path spill) {
        return small(nodes, spill).start();
    }
}
