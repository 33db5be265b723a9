package dev.croupier.formats;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One file of a record: its extension (dot included, or "") and a read-only view of its bytes.
 *
 * <p>Thread-safety: immutable; {@link #content()} hands out a fresh view each call.
 *
 * @param extension the extension, dot included, or ""
 * @param content the bytes between position and limit; kept as a view (not copied), handed out
 *     read-only
 */
public record RecordFile(String extension, ByteBuffer content) {
    /** Checks the extension and makes the content a read-only view. */
    public RecordFile {
        Objects.requireNonNull(extension, "extension");
        Objects.requireNonNull(content, "content");
        if (!extension.isEmpty() && extension.charAt(0) != '.') {
            throw new IllegalArgumentException("extension '" + extension + "' must start with '.' or be empty");
        }
        content = content.slice();
    }

    /**
     * @return an independent read-only view of the content (its own position and limit), so
     *     reading it never disturbs the record
     */
    @Override
    public ByteBuffer content() {
        return content.asReadOnlyBuffer();
    }

    /**
     * A writable-typed view for this package's writers, which only read it: a read-only heap
     * buffer hides its array, and writers would then copy every byte through a scratch chunk.
     */
    ByteBuffer viewForWriter() {
        return content.duplicate();
    }

    /** @return the content size in bytes */
    public int size() {
        return content.remaining();
    }

    /**
     * @param extension the extension
     * @param bytes the content, wrapped without copying
     * @return a file over {@code bytes}
     */
    public static RecordFile of(String extension, byte[] bytes) {
        return new RecordFile(extension, ByteBuffer.wrap(bytes));
    }
}
