package dev.croupier.formats;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Groups the files of a shard into records: adjacent files with the same key form one record,
 * as WebDataset groups them. Only one record is held in memory at a time. A file whose key and
 * extension were already seen in this shard goes to the duplicate reaction: {@code ignore} and
 * {@code warn} keep the later copy (replacing the earlier one when it is in the same record),
 * {@code abort} throws {@link BadShardException.Cause#DUPLICATE_FILE}.
 *
 * <p>Remembering the names seen costs one string per file of the shard, never file content.
 *
 * <p>Thread-safety: not thread-safe.
 */
public final class RecordReader implements Closeable {
    private final ShardReader files;
    private final Reaction duplicates;
    private final Consumer<String> warnings;
    private final Set<String> seen = new HashSet<>();
    private boolean pending;
    private boolean ended;

    /**
     * @param files the file cursor to group; closed with this reader
     * @param duplicates the reaction to a duplicate key+extension within the shard
     * @param warnings receives one message per duplicate under {@link Reaction#WARN}
     */
    public RecordReader(ShardReader files, Reaction duplicates, Consumer<String> warnings) {
        this.files = files;
        this.duplicates = duplicates;
        this.warnings = warnings;
    }

    /**
     * Opens a shard by its extension and groups its files, aborting on duplicates.
     *
     * @param shard the shard file
     * @return a record reader
     * @throws IOException when the shard cannot be opened
     */
    public static RecordReader open(Path shard) throws IOException {
        return new RecordReader(ShardFormat.forPath(shard).open(shard), Reaction.ABORT, w -> { });
    }

    /**
     * @return the next record, or {@code null} at the end of the shard
     * @throws IOException when the shard is damaged or a duplicate aborts
     */
    public Record next() throws IOException {
        if (ended) {
            return null;
        }
        if (!pending && !advance()) {
            ended = true;
            return null;
        }
        String key = files.key();
        List<RecordFile> out = new ArrayList<>();
        do {
            RecordFile file = new RecordFile(files.extension(), files.readContent());
            if (checkDuplicate()) {
                out.removeIf(f -> f.extension().equals(file.extension()));
            }
            out.add(file);
            pending = advance();
        } while (pending && files.key().equals(key));
        if (!pending) {
            ended = true;
        }
        return new Record(key, out);
    }

    private boolean advance() throws IOException {
        return files.nextFile();
    }

    /** @return true when the current file repeats a name already seen */
    private boolean checkDuplicate() throws IOException {
        if (seen.add(files.name())) {
            return false;
        }
        switch (duplicates) {
            case ABORT -> throw new BadShardException(BadShardException.Cause.DUPLICATE_FILE, files.shard(),
                    files.offset(), files.name(), "duplicate file (same key and extension) in one shard", null);
            case WARN -> warnings.accept("shard " + files.shard() + ": duplicate file '" + files.name()
                    + "' at byte offset " + files.offset() + "; keeping the later copy");
            case IGNORE -> { }
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        files.close();
    }
}
