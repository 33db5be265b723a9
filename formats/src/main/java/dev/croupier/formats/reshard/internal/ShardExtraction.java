package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.BadShardException;
import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Extraction: reads one input shard once, streaming each file's bytes into a {@link Sink}, and
 * returns the metadata of its records. All files of one key in the shard form one record,
 * adjacent or not, in first-seen order (dSort's rule); a second file with the same key and
 * extension goes to the duplicate reaction, and under ignore/warn the later copy replaces the
 * earlier one. The file with the content-key extension is also decoded (UTF-8) into
 * {@link RecordMeta#contentKey()}.
 *
 * <p>Thread-safety: stateless; one call per shard, each with its own sink, may run in parallel.
 */
public final class ShardExtraction {
    private ShardExtraction() {
    }

    /**
     * Receives extracted bytes: the local store in {@link LocalReshard}, the object store in a
     * distributed job.
     *
     * <p>Thread-safety: one extraction thread drives a sink.
     */
    public interface Sink {
        /**
         * @param content exactly {@code size} bytes
         * @param size the file's size
         * @return a location the sink understands
         * @throws IOException when storing fails or the stream is damaged
         */
        long put(InputStream content, long size) throws IOException;

        /**
         * @param content bytes already read (the content-key file)
         * @return a location
         * @throws IOException when storing fails
         */
        long put(ByteBuffer content) throws IOException;

        /**
         * @param extensions the record's extensions, in order
         * @param locations their locations, as returned by {@code put}
         * @param sizes their sizes
         * @return the record's handle, stored in {@link RecordMeta#handle()}
         */
        long addRecord(List<String> extensions, long[] locations, int[] sizes);
    }

    /** Files of one key seen so far in the shard. */
    private static final class Pending {
        final long offset;
        final List<String> extensions = new ArrayList<>(4);
        final List<long[]> files = new ArrayList<>(4);
        String contentKey;

        Pending(long offset) {
            this.offset = offset;
        }
    }

    /**
     * @param shard the input shard
     * @param shardIndex its index in the job's input list
     * @param sink receives the bytes
     * @param duplicates reaction to a repeated key+extension
     * @param contentExtension extension of the content-key file, or {@code null}
     * @param warnings receives one line per warning
     * @return the records' metadata in extraction order
     * @throws IOException when the shard is damaged ({@link BadShardException}) or storing fails
     */
    public static List<RecordMeta> extract(Path shard, int shardIndex, Sink sink, Reaction duplicates,
                                           String contentExtension, Consumer<String> warnings) throws IOException {
        Map<String, Pending> byKey = new LinkedHashMap<>();
        try (ShardReader r = ShardFormat.forPath(shard).open(shard)) {
            while (r.nextFile()) {
                Pending p = byKey.computeIfAbsent(r.key(), k -> new Pending(r.offset()));
                String ext = r.extension();
                int existing = p.extensions.indexOf(ext);
                if (existing >= 0) {
                    switch (duplicates) {
                        case ABORT -> throw new BadShardException(BadShardException.Cause.DUPLICATE_FILE, shard,
                                r.offset(), r.name(), "duplicate file (same key and extension) in one shard", null);
                        case WARN -> warnings.accept("shard " + shard + ": duplicate file '" + r.name()
                                + "' at byte offset " + r.offset() + "; keeping the later copy");
                        case IGNORE -> { }
                    }
                    p.extensions.remove(existing);
                    p.files.remove(existing);
                }
                long location;
                if (ext.equals(contentExtension)) {
                    ByteBuffer content = r.readContent();
                    p.contentKey = StandardCharsets.UTF_8.decode(content.duplicate()).toString();
                    location = sink.put(content);
                } else {
                    try (InputStream in = r.content()) {
                        location = sink.put(in, r.size());
                    }
                }
                p.extensions.add(ext);
                p.files.add(new long[] {location, r.size()});
            }
        }
        List<RecordMeta> out = new ArrayList<>(byKey.size());
        for (Map.Entry<String, Pending> e : byKey.entrySet()) {
            Pending p = e.getValue();
            long[] locations = new long[p.files.size()];
            int[] sizes = new int[p.files.size()];
            long total = 0;
            for (int i = 0; i < locations.length; i++) {
                locations[i] = p.files.get(i)[0];
                sizes[i] = (int) p.files.get(i)[1];
                total += sizes[i];
            }
            long handle = sink.addRecord(p.extensions, locations, sizes);
            out.add(new RecordMeta(e.getKey(), total, shardIndex, p.offset, p.contentKey, handle));
        }
        return out;
    }
}
