package dev.croupier.formats.reshard;

import dev.croupier.formats.Record;

/**
 * A user function applied to each record during creation (ETL while resharding): return the
 * record unchanged, a changed record (files changed, added or removed, key kept or not), or
 * {@code null} to drop it. Shard packing is planned on the records before the transform, so
 * output sizes follow the input sizes.
 *
 * <p>Serializable: a reshard on node processes ships the transform to the nodes that create
 * shards, so it must travel (a lambda or a class whose fields are serializable), and its
 * class must be on the nodes' class path.
 *
 * <p>Thread-safety: called from several creation threads at once; implementations must be
 * thread-safe.
 */
@FunctionalInterface
public interface RecordTransform extends java.io.Serializable {
    /** The transform that changes nothing. */
    RecordTransform IDENTITY = r -> r;

    /**
     * @param record the record as extracted
     * @return the record to write, or {@code null} to drop it
     */
    Record apply(Record record);
}
