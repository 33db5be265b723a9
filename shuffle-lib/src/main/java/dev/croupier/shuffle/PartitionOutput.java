package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;

/**
 * One output of a shuffle: partition {@code partition}, piece {@code part} of {@code parts}
 * (a partition is in several pieces only when skew handling split it; pieces in order make the
 * partition). Immutable.
 */
public record PartitionOutput<O>(int partition, int part, int parts, ObjectRef<O> ref) {}
