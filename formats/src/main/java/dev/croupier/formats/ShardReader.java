package dev.croupier.formats;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A forward-only cursor over the files of one shard, in the order they are stored. Nothing
 * beyond the current file's header is held in memory: {@link #content()} streams the current
 * file's bytes straight from the shard.
 *
 * <p>Each file has a name, split into a record key and an extension by {@link MemberNames}.
 * Files of one record are usually adjacent; {@link RecordReader} groups adjacent files into
 * records, and reshard extraction also merges non-adjacent files of one key, as dSort does.
 * Formats without names synthesise them: msgpack and TFRecord samples without a key get the
 * 12-digit zero-padded sample index; Sort Benchmark records get the hex of their 10-byte key.
 *
 * <p>Directories and other non-regular archive entries (links, devices) are skipped. A name
 * that is absolute or climbs out with {@code ..} fails with {@link BadShardException.Cause#UNSAFE_NAME}.
 *
 * <p>Thread-safety: not thread-safe; one thread drives a reader.
 */
public interface ShardReader extends Closeable {

    /** @return the shard file being read */
    Path shard();

    /** @return the format of the shard */
    ShardFormat format();

    /**
     * Moves to the next file, skipping whatever of the current file's content was not read.
     *
     * @return false at the end of the shard
     * @throws BadShardException when the shard is damaged
     * @throws IOException when reading fails
     */
    boolean nextFile() throws IOException;

    /** @return the full name of the current file ({@code key() + extension()}) */
    String name();

    /** @return the record key of the current file */
    String key();

    /** @return the extension of the current file, dot included, or "" */
    String extension();

    /** @return the content size of the current file in bytes */
    long size();

    /**
     * @return the byte offset in the archive stream where the current file's header (or
     *     record) starts; see {@link BadShardException} for what offsets mean in compressed shards
     */
    long offset();

    /**
     * A stream over the current file's content, valid until the next {@link #nextFile()}.
     * Closing it does not close the reader. Checksums are verified when the stream reaches
     * its end; a mismatch throws {@link BadShardException}.
     *
     * @return the content stream of the current file
     */
    InputStream content();

    /**
     * Reads the current file's content into a new heap buffer: a deliberate copy.
     *
     * @return a buffer positioned at 0 holding the whole content
     * @throws IOException when reading fails or checksums mismatch
     */
    default ByteBuffer readContent() throws IOException {
        long size = size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, shard(), offset(), name(),
                    "file of " + size + " bytes does not fit one buffer", null);
        }
        byte[] bytes = new byte[(int) size];
        try (InputStream in = content()) {
            int n = in.readNBytes(bytes, 0, bytes.length);
            if (n != bytes.length) {
                throw new BadShardException(BadShardException.Cause.TRUNCATED, shard(), offset(), name(),
                        "content ends after " + n + " of " + size + " bytes", null);
            }
            if (in.read() >= 0) {
                throw new BadShardException(BadShardException.Cause.MALFORMED, shard(), offset(), name(),
                        "content is longer than its declared " + size + " bytes", null);
            }
        }
        return ByteBuffer.wrap(bytes);
    }
}
