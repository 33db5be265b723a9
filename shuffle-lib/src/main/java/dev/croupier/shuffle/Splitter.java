package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * Splits one block of a partition into {@code ways} sub-blocks for skew handling: sub-block
 * {@code k} of every block of the partition goes to the same sub-reducer, and the outputs of
 * sub-reducers {@code 0..ways-1}, in that order, together make the partition's output (a sort
 * splits by key sub-range, a group-by by a second hash).
 */
@FunctionalInterface
public interface Splitter<B> extends Serializable {
    List<B> split(int partition, B block, int ways) throws Exception;
}
