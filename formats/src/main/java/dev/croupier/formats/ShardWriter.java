package dev.croupier.formats;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Writes one shard, record by record, under a temporary name in the target's directory.
 * Nothing becomes visible under the target name until {@link #commit()} (or
 * {@link #finish()} followed by {@link PendingShard#commit()}), which flushes, fsyncs and
 * renames atomically. {@link #close()} without a commit deletes the temporary file, so a
 * failed writer leaves nothing behind.
 *
 * <p>Call order: {@code beginRecord(key, n)}, then exactly {@code n} {@code writeFile} calls,
 * then the next record. Extensions start with a dot or are empty; file names are
 * {@code key + extension}. Formats that cannot hold a record say so with
 * {@link BadShardException.Cause#UNREPRESENTABLE}: TFRecord takes exactly one file per record
 * and stores no key; Sort Benchmark takes one 90-byte file under a 20-hex-digit key.
 *
 * <p>Thread-safety: not thread-safe; one thread drives a writer.
 */
public interface ShardWriter extends Closeable {

    /** @return the final name of the shard */
    Path target();

    /** @return the temporary file being written */
    Path temporary();

    /**
     * Starts a record.
     *
     * @param key the record key, a safe relative path ({@link MemberNames#isLocal})
     * @param fileCount the number of files that follow, at least 1
     * @throws IOException when writing fails or the format cannot hold the record
     */
    void beginRecord(String key, int fileCount) throws IOException;

    /**
     * Writes one file of the current record from a buffer; the buffer's position is not moved.
     *
     * @param extension the file's extension, dot included, or ""
     * @param content the bytes between position and limit
     * @throws IOException when writing fails
     */
    void writeFile(String extension, ByteBuffer content) throws IOException;

    /**
     * Writes one file of the current record from a stream, without buffering it whole.
     *
     * @param extension the file's extension, dot included, or ""
     * @param size the exact number of bytes {@code content} will give
     * @param content the bytes; read to exactly {@code size} bytes, not closed
     * @throws IOException when writing fails or the stream is shorter than {@code size}
     */
    void writeFile(String extension, long size, InputStream content) throws IOException;

    /** @return bytes written to the temporary file so far (compressed size for compressed formats) */
    long bytesWritten();

    /**
     * Ends the shard: writes trailers, flushes and fsyncs the temporary file, and leaves it in
     * place for a later {@link PendingShard#commit()}. The writer is closed afterwards.
     *
     * @return the finished but uncommitted shard
     * @throws IOException when writing fails or a record is incomplete
     */
    PendingShard finish() throws IOException;

    /**
     * {@link #finish()} then {@link PendingShard#commit()}.
     *
     * @return the committed shard's path
     * @throws IOException when writing or renaming fails
     */
    default Path commit() throws IOException {
        return finish().commit();
    }

    /** Discards the shard (deleting the temporary file) unless it was finished. */
    @Override
    void close() throws IOException;
}
