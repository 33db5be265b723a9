package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import net.jpountz.lz4.LZ4FrameOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;

/**
 * Design note: tar, tar.gz and tar.lz4 writer over Commons Compress. Names longer than ustar's
 * 100 bytes and sizes over 8 GiB use pax extended headers, which GNU tar, Python's tarfile and
 * Go's archive/tar all read. Members are regular files, mode 0644, mtime 0 (so the same
 * records give byte-identical shards), owner 0:0. gzip uses the default level; LZ4 uses the
 * frame format with 4 MiB blocks, so {@code lz4 -d} reads it.
 */
final class TarShardWriter extends StagedShardWriter {
    private final TarArchiveOutputStream tar;
    private final OutputStream compressor;

    TarShardWriter(Path target, ShardFormat format) throws IOException {
        super(target);
        try {
            OutputStream base = unclosableOut();
            compressor = switch (format) {
                case TAR -> base;
                case TAR_GZ -> new GzipCompressorOutputStream(base);
                case TAR_LZ4 -> new LZ4FrameOutputStream(base, LZ4FrameOutputStream.BLOCKSIZE.SIZE_4MB);
                default -> throw new IllegalArgumentException("not a tar format: " + format);
            };
            tar = new TarArchiveOutputStream(compressor, 512 * 20, "UTF-8");
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            tar.setAddPaxHeadersForNonAsciiNames(true);
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    void startRecord(String key, int fileCount) {
        // tar has no record framing: the shared key prefix of the member names is the record.
    }

    private void header(String name, long size) throws IOException {
        TarArchiveEntry e = new TarArchiveEntry(name, true);
        e.setSize(size);
        e.setMode(TarArchiveEntry.DEFAULT_FILE_MODE);
        e.setModTime(0L);
        tar.putArchiveEntry(e);
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        header(key + extension, content.remaining());
        put(content, tar);
        tar.closeArchiveEntry();
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        header(key + extension, size);
        copy(content, size, tar);
        tar.closeArchiveEntry();
    }

    @Override
    void writeTrailer() throws IOException {
        tar.finish();
        // Closing the compressor writes its end mark; the base stream ignores close.
        tar.close();
        compressor.close();
    }
}
