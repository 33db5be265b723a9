package dev.croupier.futures.internal;

import dev.croupier.futures.Codec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The checked settings of an embedded cluster, made by {@code Cluster.Builder}. Immutable.
 *
 * @param cpusPerNode CPU slots of every node, or of the last ones when they are shared out
 *     ({@link #cpusOf})
 * @param cpusLeftOver how many of the first nodes have one slot more ({@link #shareProcessors})
 * @param memoryDirectory null for the object store's default
 * @param spillDirectory null for the object store's default
 * @param codecs in registration order, which numbers them the same on the driver and the nodes
 * @param serializing whether the embedded backend encodes every message as the wire does
 * @param addresses the names of node processes to connect to ({@code host:port}, checked for
 *     form); empty for an embedded cluster
 * @param resolveEvery how often the driver resolves {@code addresses} again
 * @param resolver what the names stand for now ({@code ip:port} each): {@link NodeAddresses#resolve},
 *     or a test's own
 * @param processes node processes to start on this machine; 0 for none
 * @param heartbeatTimeout a node process not heard from for this long is dead to the driver
 * @param tokenFile the token's file for node processes; null for {@code CROUPIER_TOKEN} or none
 * @param tlsAuthority the CA the driver trusts for TLS; null for {@code CROUPIER_TLS_CA} or none
 */
public record ClusterConfig(
        int nodes,
        int cpusPerNode,
        int cpusLeftOver,
        long objectStoreBytes,
        int smallObjectBytes,
        Path memoryDirectory,
        Path spillDirectory,
        List<String> serializableAllowList,
        Map<Class<?>, Codec<?>> codecs,
        boolean serializing,
        List<String> addresses,
        int processes,
        java.time.Duration heartbeatTimeout,
        Path tokenFile,
        Path tlsAuthority,
        java.time.Duration resolveEvery,
        java.util.function.UnaryOperator<List<String>> resolver,
        int metricsPort) {

    /** This configuration with another resolver of the names: a seam for tests of membership. */
    public ClusterConfig withResolver(java.util.function.UnaryOperator<List<String>> other) {
        return new ClusterConfig(nodes, cpusPerNode, cpusLeftOver, objectStoreBytes, smallObjectBytes,
                memoryDirectory, spillDirectory, serializableAllowList, codecs, serializing, addresses, processes,
                heartbeatTimeout, tokenFile, tlsAuthority, resolveEvery, other, metricsPort);
    }

    /** This configuration with other CPU slots per node: a seam for tests of uneven nodes. */
    public ClusterConfig withCpus(int each, int leftOver) {
        return new ClusterConfig(nodes, each, leftOver, objectStoreBytes, smallObjectBytes, memoryDirectory,
                spillDirectory, serializableAllowList, codecs, serializing, addresses, processes, heartbeatTimeout,
                tokenFile, tlsAuthority, resolveEvery, resolver, metricsPort);
    }

    /** The CPU slots of node {@code node}. */
    public int cpusOf(int node) {
        return cpusPerNode + (node < cpusLeftOver ? 1 : 0);
    }

    /**
     * The CPU slots of {@code nodes} nodes that share {@code processors} when none are given:
     * {@code {each, leftOver}}, where every node has {@code each} (at least 1) and the first
     * {@code leftOver} one more, so every processor has a slot (6 over 4 nodes: 2, 2, 1, 1).
     */
    public static int[] shareProcessors(int processors, int nodes) {
        return processors <= nodes ? new int[] {1, 0} : new int[] {processors / nodes, processors % nodes};
    }
}
