package dev.croupier.shuffle;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A {@link PackedMapper} over {@code MemorySegment} blocks whose packs are {@link PackFrame}s,
 * written as one method for both forms: {@code packs} 0 asks for one block per partition, more
 * for that many packs. A map kernel counts its partitions' sizes, calls
 * {@link PackFrame#allocate} with them and {@code packs}, and writes each partition into the
 * block it is given, so the two forms share one code path and a pack costs no copy:
 *
 * <pre>{@code
 * builder.packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) -> {
 *     long[] bytes = sizesOf(in, r);
 *     MemorySegment[] parts = new MemorySegment[r];
 *     List<MemorySegment> out = PackFrame.allocate(bytes, packs, parts);
 *     fill(in, parts);
 *     return out;
 * })
 * }</pre>
 *
 * Stateless implementations are thread-safe.
 */
@FunctionalInterface
public interface SegmentPackMapper<I> extends PackedMapper<I, MemorySegment> {

    /** The map, into one block per partition ({@code packs} 0) or into {@code packs} packs. */
    @Override
    List<MemorySegment> mapPacked(int mapIndex, I input, int partitions, int packs) throws Exception;

    @Override
    default List<MemorySegment> map(int mapIndex, I input, int partitions) throws Exception {
        return mapPacked(mapIndex, input, partitions, 0);
    }

    @Override
    default MemorySegment unpack(MemorySegment pack, int k) {
        return PackFrame.part(pack, k);
    }
}
