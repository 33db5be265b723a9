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
final class TfRecordShardReader extends MemberCursor {
    /** Extension given to every TFRecord payload. */
    static final String EXTENSION = ".tfrecord";

    private final long fileSize;
    private final InputStream in;
    private final byte[] frame = new byte[TfRecordFrame.HEADER];
    private long position;
    private long index = -1;

    TfRecordShardReader(Path shard) throws IOException {
        super(shard, ShardFormat.TFRECORD);
        this.fileSize = Files.size(shard);
        this.in = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
        source(in);
    }



    @Override
    public boolean nextFile() throws IOException {
        if (current() != null) {
            current().drain();
        }
        int n = in.readNBytes(frame, 0, TfRecordFrame.HEADER);
        if (n == 0) {
            return end();
        }
        long offset = position;
        if (n < TfRecordFrame.HEADER) {
            throw bad(BadShardException.Cause.TRUNCATED, offset, null,
                    "file ends inside a TFRecord header (" + n + " of 12 bytes)", null);
        }
        position += n;
        long length = TfRecordFrame.getLongLE(frame, 0);
        int stored = TfRecordFrame.getIntLE(frame, 8);
        int computed = TfRecordFrame.maskedCrc(frame, 0, 8);
        if (stored != computed) {
            throw bad(BadShardException.Cause.CHECKSUM_MISMATCH, offset, null,
                    String.format("TFRecord length CRC mismatch: stored %08x, computed %08x", stored, computed), null);
        }
        long left = fileSize - position;
        if (length < 0 || length > left - TfRecordFrame.FOOTER) {
            throw bad(BadShardException.Cause.TRUNCATED, offset, null,
                    "TFRecord record declares " + Long.toUnsignedString(length) + " data bytes but only "
                            + Math.max(0, left - TfRecordFrame.FOOTER) + " remain", null);
        }
        index++;
        member(String.format("%012d", index), EXTENSION, length, offset, new Content(length));
        return true;
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
                throw bad(BadShardException.Cause.CHECKSUM_MISMATCH, offset(), name(),
                        String.format("TFRecord data CRC mismatch: stored %08x, computed %08x", stored, computed), null);
            }
        }

        @Override
        IOException truncated() {
            return bad(BadShardException.Cause.TRUNCATED, position, name(),
                    "file ends inside a TFRecord record", null);
        }
    }
}
