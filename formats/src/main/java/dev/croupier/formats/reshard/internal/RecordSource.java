package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.Record;
import java.io.IOException;

/**
 * Where creation gets a record's bytes from, given its metadata: the local extraction store
 * here, the object store in a distributed job.
 *
 * <p>Thread-safety: implementations must allow concurrent {@link #load} calls.
 */
@FunctionalInterface
public interface RecordSource {
    /**
     * @param meta a record's metadata, as extraction produced it
     * @return the record, its files as read-only views where possible
     * @throws IOException when the bytes cannot be read
     */
    Record load(RecordMeta meta) throws IOException;
}
