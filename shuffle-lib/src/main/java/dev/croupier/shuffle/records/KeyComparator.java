package dev.croupier.shuffle.records;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;

/**
 * A user-defined order of keys, for sorts whose keys are not ordered bytewise (numbers in
 * little-endian, a descending order, a collation). It compares the key that starts at
 * {@code aOffset} of {@code a} with the key at {@code bOffset} of {@code b}; both are
 * {@link RecordLayout#keyBytes()} long (a record's key, or a sampled key).
 *
 * <p>It must be a total order, deterministic (lineage reconstruction re-runs the tasks that use
 * it) and must not keep the segments. It travels to map and reduce tasks, hence
 * {@link Serializable}. Without one, sorts compare keys as unsigned bytes, which allows the
 * radix sort; with one, reducers use a merge sort over record ordinals (no object per record).
 * Implementations are called from many task threads at once and must be thread-safe.
 */
@FunctionalInterface
public interface KeyComparator extends Serializable {

    /**
     * Compares two keys.
     *
     * @return negative, zero or positive as the first key orders before, with, or after the second
     */
    int compare(MemorySegment a, long aOffset, MemorySegment b, long bOffset);
}
