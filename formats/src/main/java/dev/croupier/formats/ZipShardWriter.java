package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;

import org.apache.commons.compress.archivers.zip.Zip64Mode;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipArchiveOutputStream;

/**
 * Design note: zip writer over Commons Compress, writing straight to the temporary file's
 * channel because a STORED entry whose CRC is not known up front needs its local header patched
 * after the data, which takes a seekable output. Entries are STORED (dataset files are usually
 * compressed already, and STORED keeps the writer at disk speed); ZIP64 records are added only
 * when sizes need them, so {@code unzip} and Python's zipfile read every shard.
 */
final class ZipShardWriter extends StagedShardWriter {
    /** DOS time cannot hold 1970; 1980-01-01 keeps shards of the same records byte-identical. */
    private static final FileTime FIXED_TIME = FileTime.from(Instant.parse("1980-01-01T00:00:00Z"));

    private final ZipArchiveOutputStream zip;

    ZipShardWriter(Path target) throws IOException {
        super(target);
        try {
            zip = new ZipArchiveOutputStream(channel());
            zip.setUseZip64(Zip64Mode.AsNeeded);
            zip.setMethod(ZipArchiveEntry.STORED);
            zip.setEncoding("UTF-8");
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public long bytesWritten() {
        try {
            return channel().position();
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    void startRecord(String key, int fileCount) {
        // zip has no record framing: the shared key prefix of the entry names is the record.
    }

    private void header(String name, long size) throws IOException {
        ZipArchiveEntry e = new ZipArchiveEntry(name);
        e.setMethod(ZipArchiveEntry.STORED);
        e.setSize(size);
        e.setLastModifiedTime(FIXED_TIME);
        zip.putArchiveEntry(e);
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        header(key + extension, content.remaining());
        put(content, zip);
        zip.closeArchiveEntry();
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        header(key + extension, size);
        copy(content, size, zip);
        zip.closeArchiveEntry();
    }

    @Override
    void writeTrailer() throws IOException {
        zip.finish();
    }
}
