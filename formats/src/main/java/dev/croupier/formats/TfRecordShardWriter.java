package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Design note: TFRecord writer (layout in {@link TfRecordFrame}). A TFRecord record is one
 * opaque payload without a name, so a record must hold exactly one file; its key and extension
 * are not stored. The data CRC is computed while streaming and written after the data.
 */
final class TfRecordShardWriter extends StagedShardWriter {
    private final byte[] frame = new byte[TfRecordFrame.HEADER];
    private final CRC32C crc = new CRC32C();
    private final OutputStream summing = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            crc.update(b);
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            crc.update(b, off, len);
            out.write(b, off, len);
        }
    };

    TfRecordShardWriter(Path target) throws IOException {
        super(target);
    }

    @Override
    void startRecord(String key, int fileCount) throws IOException {
        if (fileCount != 1) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target(), bytesWritten(), key,
                    "a TFRecord record holds exactly one payload, this record has " + fileCount + " files", null);
        }
    }

    private void header(long length) throws IOException {
        TfRecordFrame.putLongLE(frame, 0, length);
        TfRecordFrame.putIntLE(frame, 8, TfRecordFrame.maskedCrc(frame, 0, 8));
        out.write(frame, 0, TfRecordFrame.HEADER);
        crc.reset();
    }

    private void footer() throws IOException {
        TfRecordFrame.putIntLE(frame, 0, TfRecordFrame.mask((int) crc.getValue()));
        out.write(frame, 0, TfRecordFrame.FOOTER);
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        header(content.remaining());
        put(content, summing);
        footer();
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        header(size);
        copy(content, size, summing);
        footer();
    }

    @Override
    void writeTrailer() {
        // TFRecord files are a bare concatenation of records.
    }
}
