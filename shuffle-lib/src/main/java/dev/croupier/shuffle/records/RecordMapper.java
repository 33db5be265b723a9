package dev.croupier.shuffle.records;

import dev.croupier.shuffle.PackedMapper;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The map of a record job, written once for both forms: {@code packs} 0 for one block per
 * partition, else that many {@link PackFrame} packs. Stateless, so thread-safe.
 */
@FunctionalInterface
interface RecordMapper extends PackedMapper<MemorySegment, MemorySegment> {

    @Override
    List<MemorySegment> mapPacked(int mapIndex, MemorySegment input, int partitions, int packs) throws Exception;

    @Override
    default List<MemorySegment> map(int mapIndex, MemorySegment input, int partitions) throws Exception {
        return mapPacked(mapIndex, input, partitions, 0);
    }

    @Override
    default MemorySegment unpack(MemorySegment pack, int k) {
        return PackFrame.part(pack, k);
    }
}
