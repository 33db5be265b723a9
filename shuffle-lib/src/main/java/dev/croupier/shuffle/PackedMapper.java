package dev.croupier.shuffle;

import java.util.List;

/**
 * A mapper that can also write the blocks of several partitions into one block, a pack. The
 * push strategies ({@link Strategy#MAGNET}, {@link Strategy#PUSH_PIPELINED}) then take one pack
 * per merging node from each map task, as the Exoshuffle paper's push* does: M x W map outputs
 * for W nodes instead of M x R, and each node's merge reads one object per map.
 * {@link Strategy#RIFFLE} takes one pack per map, which its merges read. The strategies whose
 * reducers read map outputs themselves (SIMPLE, STREAMING) call the plain {@link #map}.
 *
 * <p>Pack {@code g} of {@code packs} holds partitions {@code g, g + packs, g + 2*packs, ...}
 * below {@code partitions}, in that order, which are the reducers of the {@code g}-th merging
 * node; {@link #unpack unpack(pack, k)} is partition {@code g + k*packs}. Like the plain map,
 * {@code mapPacked} runs as a task and must be deterministic, and the partitions' contents
 * must be those {@link #map} gives. Implementations are stateless, so thread-safe.
 */
public interface PackedMapper<I, B> extends IndexedMapper<I, B> {

    /** Maps {@code input} (map input {@code mapIndex}) into {@code packs} packs of its partitions. */
    List<B> mapPacked(int mapIndex, I input, int partitions, int packs) throws Exception;

    /**
     * Partition block {@code k} of {@code pack}, best as a view of it (it is read inside the
     * merge task, or the reduce task, that holds the pack).
     */
    B unpack(B pack, int k) throws Exception;
}
