package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.PendingShard;
import dev.croupier.formats.Record;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardWriter;
import dev.croupier.formats.reshard.RecordTransform;
import dev.croupier.formats.reshard.ReshardException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Creation: writes one output shard from ordered record metadata, loading each record from a
 * {@link RecordSource} and passing it through the user transform. The shard is left pending
 * (fsynced under a temporary name); the job commits every shard only once all succeeded.
 *
 * <p>Thread-safety: stateless; shards may be created in parallel.
 */
public final class ShardCreation {
    private ShardCreation() {
    }

    /** What one created shard holds. @param pending the uncommitted shard @param records records written @param contentBytes their content bytes */
    public record Created(PendingShard pending, long records, long contentBytes) {
    }

    /**
     * @param records the shard's records in order
     * @param source loads each record's bytes
     * @param format the output format
     * @param target the output shard's final name
     * @param transform applied to each record; {@code null} result drops it
     * @return the pending shard and what it holds
     * @throws IOException when loading or writing fails; no temporary file is left behind
     */
    public static Created create(List<RecordMeta> records, RecordSource source, ShardFormat format, Path target,
                                 RecordTransform transform) throws IOException {
        long written = 0;
        long bytes = 0;
        try (ShardWriter w = format.create(target)) {
            for (RecordMeta m : records) {
                Record r = source.load(m);
                Record out;
                try {
                    out = transform.apply(r);
                } catch (RuntimeException e) {
                    throw new ReshardException(ReshardException.Kind.TRANSFORM, "transform failed on record '"
                            + m.key() + "' (input shard #" + m.shard() + ") while creating " + target, e);
                }
                if (out == null || out.files().isEmpty()) {
                    continue;
                }
                out.writeTo(w);
                written++;
                bytes += out.size();
            }
            return new Created(w.finish(), written, bytes);
        }
    }
}
