package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Design note: Sort Benchmark (gensort) writer: each record is its 10-byte key, decoded from
 * the record key's 20 hex digits, followed by its single 90-byte value file. No framing, so the
 * output is exactly what {@code valsort} checks.
 */
final class SortBenchmarkShardWriter extends StagedShardWriter {
    private final byte[] keyBytes = new byte[SortBenchmarkShardReader.KEY_SIZE];

    SortBenchmarkShardWriter(Path target) throws IOException {
        super(target);
    }

    @Override
    void startRecord(String key, int fileCount) throws IOException {
        if (fileCount != 1 || key.length() != 2 * SortBenchmarkShardReader.KEY_SIZE) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target(), bytesWritten(), key,
                    "a Sort Benchmark record is one 90-byte file under a 20-hex-digit key; got "
                            + fileCount + " file(s) under a " + key.length() + "-character key", null);
        }
        for (int i = 0; i < keyBytes.length; i++) {
            int hi = Character.digit(key.charAt(2 * i), 16);
            int lo = Character.digit(key.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target(), bytesWritten(), key,
                        "Sort Benchmark record key must be 20 hex digits", null);
            }
            keyBytes[i] = (byte) (hi << 4 | lo);
        }
        out.write(keyBytes);
    }

    private void checkSize(String key, long size) throws IOException {
        if (size != SortBenchmarkShardReader.VALUE_SIZE) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target(), bytesWritten(), key,
                    "a Sort Benchmark value is 90 bytes, got " + size, null);
        }
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        checkSize(key, content.remaining());
        put(content, out);
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        checkSize(key, size);
        copy(content, size, out);
    }

    @Override
    void writeTrailer() {
        // Records are back to back; nothing ends the file.
    }
}
