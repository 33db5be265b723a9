package dev.croupier.futures.internal;

import dev.croupier.futures.Codec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The checked settings of an embedded cluster, made by {@code Cluster.Builder}. Immutable.
 *
 * @param memoryDirectory null for the object store's default
 * @param spillDirectory null for the object store's default
 */
public record ClusterConfig(
        int nodes,
        int cpusPerNode,
        long objectStoreBytes,
        int smallObjectBytes,
        Path memoryDirectory,
        Path spillDirectory,
        List<String> serializableAllowList,
        Map<Class<?>, Codec<?>> codecs) {}
