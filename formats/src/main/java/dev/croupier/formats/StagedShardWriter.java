package dev.croupier.formats;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Design note: the commit protocol shared by every format writer. Bytes go to a temporary file
 * created next to the target ({@code .<name>.<random>.tmp}, so the final rename stays within one
 * directory and is atomic), through a counting, buffered stream the format wraps. The
 * per-format subclass sees only {@link #out} and three hooks; record bookkeeping (file count,
 * key and extension checks) lives here so every format refuses the same misuse the same way.
 * {@link #finish()} writes the trailer, flushes, fsyncs and hands back a {@link PendingShard};
 * {@link #close()} before that deletes the temporary file.
 */
abstract class StagedShardWriter implements ShardWriter {
    /** Copy buffer size for streamed file content. */
    static final int COPY_CHUNK = 64 * 1024;

    private final Path target;
    private final Path temporary;
    private final FileOutputStream file;
    private final Counting counting;
    /** The buffered, counted stream over the temporary file that formats write to. */
    final OutputStream out;
    private final byte[] chunk = new byte[COPY_CHUNK];
    private int filesLeft;
    private String key;
    private boolean closed;

    StagedShardWriter(Path target) throws IOException {
        this.target = target;
        Path dir = target.toAbsolutePath().getParent();
        this.temporary = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
        this.file = new FileOutputStream(temporary.toFile());
        this.counting = new Counting(file);
        this.out = new BufferedOutputStream(counting, COPY_CHUNK);
    }

    @Override
    public final Path target() {
        return target;
    }

    @Override
    public final Path temporary() {
        return temporary;
    }

    @Override
    public long bytesWritten() {
        return counting.count;
    }

    /** @return the temporary file's channel, for formats that must seek back (zip) */
    final java.nio.channels.FileChannel channel() {
        return file.getChannel();
    }

    @Override
    public final void beginRecord(String key, int fileCount) throws IOException {
        ensureOpen();
        if (filesLeft != 0) {
            throw new IllegalStateException("record '" + this.key + "' still expects " + filesLeft + " file(s)");
        }
        if (fileCount < 1) {
            throw new IllegalArgumentException("fileCount must be >= 1, got " + fileCount + " for record '" + key + "'");
        }
        if (!MemberNames.isLocal(key)) {
            throw new BadShardException(BadShardException.Cause.UNSAFE_NAME, target, bytesWritten(), key,
                    "record key is absolute, empty or climbs out with '..'", null);
        }
        if (MemberNames.extensionStart(key) != key.length()) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target, bytesWritten(), key,
                    "record key has a dot in its file name, so its files would read back under another key", null);
        }
        this.key = key;
        this.filesLeft = fileCount;
        startRecord(key, fileCount);
    }

    @Override
    public final void writeFile(String extension, ByteBuffer content) throws IOException {
        checkFile(extension);
        writeBuffer(key, extension, content.duplicate());
        filesLeft--;
    }

    @Override
    public final void writeFile(String extension, long size, InputStream content) throws IOException {
        checkFile(extension);
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        writeStream(key, extension, size, content);
        filesLeft--;
    }

    private void checkFile(String extension) {
        ensureOpen();
        if (filesLeft == 0) {
            throw new IllegalStateException("writeFile outside a record: call beginRecord first");
        }
        if (!extension.isEmpty() && (extension.charAt(0) != '.' || extension.indexOf('/') >= 0)) {
            throw new IllegalArgumentException("extension '" + extension
                    + "' must start with '.' and hold no '/', or be empty");
        }
    }

    @Override
    public final PendingShard finish() throws IOException {
        ensureOpen();
        if (filesLeft != 0) {
            throw new IllegalStateException("record '" + key + "' still expects " + filesLeft + " file(s)");
        }
        try {
            writeTrailer();
            out.flush();
            file.getFD().sync();
            file.close();
            closed = true;
            return new PendingShard(temporary, target, Files.size(temporary));
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public final void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            file.close();
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("writer for " + target + " is finished or closed");
        }
    }

    /** Called once per record after the checks; formats with record headers write them here. */
    abstract void startRecord(String key, int fileCount) throws IOException;

    /** Writes one file from a buffer the writer may consume (a duplicate of the caller's). */
    abstract void writeBuffer(String key, String extension, ByteBuffer content) throws IOException;

    /** Writes one file of exactly {@code size} bytes from a stream. */
    abstract void writeStream(String key, String extension, long size, InputStream content) throws IOException;

    /** Ends the format (trailers, compressor end marks) without closing the file. */
    abstract void writeTrailer() throws IOException;

    /** Copies exactly {@code size} bytes from {@code in} to {@code sink}, failing when {@code in} ends early. */
    final void copy(InputStream in, long size, OutputStream sink) throws IOException {
        long left = size;
        while (left > 0) {
            int n = in.read(chunk, 0, (int) Math.min(chunk.length, left));
            if (n < 0) {
                throw new IOException("content stream ended after " + (size - left) + " of " + size
                        + " bytes while writing " + target);
            }
            sink.write(chunk, 0, n);
            left -= n;
        }
    }

    /** Writes the remaining bytes of a buffer: straight from the array when heap, through the chunk otherwise. */
    final void put(ByteBuffer content, OutputStream sink) throws IOException {
        if (content.hasArray()) {
            sink.write(content.array(), content.arrayOffset() + content.position(), content.remaining());
            content.position(content.limit());
            return;
        }
        while (content.hasRemaining()) {
            int n = Math.min(chunk.length, content.remaining());
            content.get(chunk, 0, n);
            sink.write(chunk, 0, n);
        }
    }

    /** @return a stream over {@link #out} that ignores close, for wrappers whose close ends the format */
    final OutputStream unclosableOut() {
        return new FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                out.flush();
            }
        };
    }

    /** Counts bytes reaching the file. */
    private static final class Counting extends FilterOutputStream {
        long count;

        Counting(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count += len;
        }
    }
}
