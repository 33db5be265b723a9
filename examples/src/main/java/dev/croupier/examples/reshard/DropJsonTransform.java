package dev.croupier.examples.reshard;

import java.util.List;

import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.reshard.RecordTransform;

/**
 * An example transform for {@code croupier reshard --transform}: drops every record's
 * {@code .json} file, and drops a record left with no file. It shows the shape the CLI needs
 * (a public class with a public no-arg constructor); a real one would convert images or labels.
 *
 * <p>Thread-safety: stateless.
 */
public final class DropJsonTransform implements RecordTransform {
    /** Needed by {@code --transform}. */
    public DropJsonTransform() {
    }

    @Override
    public Record apply(Record record) {
        List<RecordFile> kept = record.files().stream().filter(f -> !f.extension().equals(".json")).toList();
        return kept.isEmpty() ? null : new Record(record.key(), kept);
    }
}
