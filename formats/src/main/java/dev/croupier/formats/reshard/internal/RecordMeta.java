package dev.croupier.formats.reshard.internal;

/**
 * What ordering and packing know of a record: never its bytes. Record identity is
 * {@code shard + key}, so one key in two input shards is two records, as in dSort.
 *
 * <p>Thread-safety: immutable.
 *
 * @param key the record key
 * @param size content bytes of all its files
 * @param shard index of its input shard in the job's input list
 * @param offset byte offset of its first file in the input shard (orders records within a shard)
 * @param contentKey text of the content-key file for {@link Algorithm.Kind#CONTENT}, else {@code null}
 * @param handle opaque locator of the record's bytes in the extraction store
 */
public record RecordMeta(String key, long size, int shard, long offset, String contentKey, long handle) {
}
