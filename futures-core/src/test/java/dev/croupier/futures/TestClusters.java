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

    /**
     * What {@code start} makes, with its nodes pulling each other's objects over the stream:
     * nodes in one JVM share a host, where they would lend each other their objects instead
     * ({@code croupier.pull.sameHost}, read when a node starts). For tests of what crosses the
     * wire between hosts.
     */
    static <T> T pullingOverTheStream(java.util.function.Supplier<T> start) {
        String before = System.getProperty("croupier.pull.sameHost");
        System.setProperty("croupier.pull.sameHost", "false");
        try {
            return start.get();
        } finally {
            if (before == null) {
                System.clearProperty("croupier.pull.sameHost");
            } else {
                System.setProperty("croupier.pull.sameHost", before);
            }
        }
    }
}
