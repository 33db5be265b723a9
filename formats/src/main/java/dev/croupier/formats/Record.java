package dev.croupier.formats;

import java.util.List;
import java.util.Objects;

/**
 * A sample: a key and its files in order. The files of one record are never separated when
 * shards are rewritten.
 *
 * <p>Thread-safety: immutable.
 *
 * @param key the record key (the member path up to the first dot of its file name)
 * @param files the files, in their stored order
 */
public record Record(String key, List<RecordFile> files) {
    /** Copies the file list so the record is immutable. */
    public Record {
        Objects.requireNonNull(key, "key");
        files = List.copyOf(files);
    }

    /** @return the total content size of the files in bytes */
    public long size() {
        long s = 0;
        for (RecordFile f : files) {
            s += f.size();
        }
        return s;
    }

    /**
     * @param extension an extension, dot included
     * @return the first file with that extension, or {@code null}
     */
    public RecordFile file(String extension) {
        for (RecordFile f : files) {
            if (f.extension().equals(extension)) {
                return f;
            }
        }
        return null;
    }

    /**
     * Writes this record to a shard writer.
     *
     * @param writer the writer
     * @throws java.io.IOException when writing fails
     */
    public void writeTo(ShardWriter writer) throws java.io.IOException {
        writer.beginRecord(key, files.size());
        for (RecordFile f : files) {
            writer.writeFile(f.extension(), f.viewForWriter());
        }
    }
}
