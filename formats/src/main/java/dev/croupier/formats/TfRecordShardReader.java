package dev.croupier.formats;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Design note: TFRecord reader (layout in {@link TfRecordFrame}). The length CRC is checked
 * before the length is trusted, and the length is checked against the bytes left in the file,
 * so a corrupt length never makes us read or allocate gigabytes. The data CRC is computed while
 * the content streams and checked at its end; skipping a record reads it through, so every
 * record's CRC is verified. Records are named by their 12-digit index.
 */
final class TfRecordShardReader implements ShardReader {
    /** Extension given to every TFRecord payload. */
    static final String EXTENSION = ".tfrecord";

    private final Path shard;
    private final long fileSize;
    private final InputStream in;
    private final byte[] frame = new byte[TfRecordFrame.HEADER];
    private long position;
    private long index = -1;
    private String key;
    private long size;
    private long offset;
    private Content content;

    TfRecordShardReader(Path shard) throws IOException {
        this.shard = shard;
        this.fileSize = Files.size(shard);
        this.in = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
    }

    @Override
    public Path shard() {
        return shard;
    }

    @Override
    public ShardFormat format() {
        return ShardFormat.TFRECORD;
    }

    @Override
    public boolean nextFile() throws IOException {
        if (content != null) {
            content.drain();
            content = null;
        }
        int n = in.readNBytes(frame, 0, TfRecordFrame.HEADER);
        if (n == 0) {
            return false;
        }
        offset = position;
        if (n < TfRecordFrame.HEADER) {
            throw new BadShardException(BadShardException.Cause.TRUNCATED, shard, offset, null,
                    "file ends inside a TFRecord header (" + n + " of 12 bytes)", null);
        }
        position += n;
        long length = TfRecordFrame.getLongLE(frame, 0);
        int stored = TfRecordFrame.getIntLE(frame, 8);
        int computed = TfRecordFrame.maskedCrc(frame, 0, 8);
        if (stored != computed) {
            throw new BadShardException(BadShardException.Cause.CHECKSUM_MISMATCH, shard, offset, null,
                    String.format("TFRecord length CRC mismatch: stored %08x, computed %08x", stored, computed), null);
        }
        long left = fileSize - position;
        if (length < 0 || length > left - TfRecordFrame.FOOTER) {
            throw new BadShardException(BadShardException.Cause.TRUNCATED, shard, offset, null,
                    "TFRecord record declares " + Long.toUnsignedString(length) + " data bytes but only "
                            + Math.max(0, left - TfRecordFrame.FOOTER) + " remain", null);
        }
        index++;
        key = String.format("%012d", index);
        size = length;
        content = new Content(length);
        return true;
    }

    @Override
    public String name() {
        return key + EXTENSION;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String extension() {
        return EXTENSION;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public InputStream content() {
        if (content == null) {
            throw new IllegalStateException("no current file: call nextFile() first");
        }
        return content;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    private final class Content extends ArchiveStreams.Bounded {
        private final CRC32C crc = new CRC32C();

        Content(long size) {
            super(size);
        }

        @Override
        int readSource(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                crc.update(b, off, n);
                position += n;
            }
            return n;
        }

        @Override
        void atEnd() throws IOException {
            int n = in.readNBytes(frame, 0, TfRecordFrame.FOOTER);
            if (n < TfRecordFrame.FOOTER) {
                throw truncated();
            }
            position += n;
            int stored = TfRecordFrame.getIntLE(frame, 0);
            int computed = TfRecordFrame.mask((int) crc.getValue());
            if (stored != computed) {
                throw new BadShardException(BadShardException.Cause.CHECKSUM_MISMATCH, shard, offset, name(),
                        String.format("TFRecord data CRC mismatch: stored %08x, computed %08x", stored, computed), null);
            }
        }

        @Override
        IOException truncated() {
            return new BadShardException(BadShardException.Cause.TRUNCATED, shard, position, name(),
                    "file ends inside a TFRecord record", null);
        }
    }
}
