package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import net.jpountz.lz4.LZ4FrameOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.archivers.zip.ZipEncoding;
import org.apache.commons.compress.archivers.zip.ZipEncodingHelper;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;

/**
 * Design note: tar, tar.gz and tar.lz4 writer. It frames the archive itself and borrows only
 * Commons Compress's header encoder ({@link TarArchiveEntry#writeEntryHeader}), because its
 * output stream pushes content through a channel adapter and a fixed-block buffer, two extra
 * copies of every byte; here content goes from the caller's array to the file buffer once.
 *
 * <p>Layout (POSIX.1-2001 pax over ustar; format version: ustar "00"):
 * <pre>
 *  per file:  [pax 'x' header block | pax records, padded to 512]   only for names that are
 *             [ustar header block, 512 B: name(100) mode(8) uid(8)   longer than 100 bytes or
 *              gid(8) size(12) mtime(12) chksum(8) typeflag(1)       not ASCII, or sizes over
 *              linkname(100) "ustar\0" "00" uname gname ... ]         8 GiB - 1
 *             [content, zero-padded to a multiple of 512]
 *  end:       [two zero blocks][zeros up to a multiple of 10240, GNU tar's record size]
 * </pre>
 * A pax record is {@code "<len> path=<name>\n"} with {@code len} counting the whole record.
 * Members are regular files, mode 0644, mtime 0, owner 0:0, so the same records always give
 * byte-identical shards. gzip uses the default level; LZ4 uses the frame format with 4 MiB blocks.
 */
final class TarShardWriter extends StagedShardWriter {
    private static final int BLOCK = 512;
    private static final int RECORD = 20 * BLOCK;
    private static final long MAX_OCTAL_SIZE = 077777777777L;
    private static final byte[] ZEROS = new byte[RECORD];
    private static final ZipEncoding UTF8 = ZipEncodingHelper.getZipEncoding("UTF-8");

    private final OutputStream sink;
    private final byte[] header = new byte[BLOCK];
    private long tarBytes;

    TarShardWriter(Path target, ShardFormat format) throws IOException {
        super(target);
        try {
            sink = switch (format) {
                case TAR -> out;
                case TAR_GZ -> new GzipCompressorOutputStream(unclosableOut());
                case TAR_LZ4 -> new LZ4FrameOutputStream(unclosableOut(), LZ4FrameOutputStream.BLOCKSIZE.SIZE_4MB);
                default -> throw new IllegalArgumentException("not a tar format: " + format);
            };
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    void startRecord(String key, int fileCount) {
        // tar has no record framing: the shared key prefix of the member names is the record.
    }

    private void write(byte[] b, int off, int len) throws IOException {
        sink.write(b, off, len);
        tarBytes += len;
    }

    private void header(String name, long size) throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        boolean paxName = nameBytes.length > TarConstants.NAMELEN || nameBytes.length != name.length();
        boolean bigSize = size > MAX_OCTAL_SIZE;
        if (paxName || bigSize) {
            StringBuilder records = new StringBuilder();
            if (paxName) {
                records.append(paxRecord("path", name));
            }
            if (bigSize) {
                records.append(paxRecord("size", Long.toString(size)));
            }
            byte[] pax = records.toString().getBytes(StandardCharsets.UTF_8);
            TarArchiveEntry x = new TarArchiveEntry("./PaxHeaders/" + asciiTail(name), TarConstants.LF_PAX_EXTENDED_HEADER_LC);
            x.setSize(pax.length);
            x.setModTime(0L);
            block(x, false);
            write(pax, 0, pax.length);
            pad(pax.length);
        }
        TarArchiveEntry e = new TarArchiveEntry(paxName ? asciiTail(name) : name, true);
        e.setSize(size);
        e.setMode(TarArchiveEntry.DEFAULT_FILE_MODE);
        e.setModTime(0L);
        block(e, bigSize);
    }

    private void block(TarArchiveEntry e, boolean starMode) throws IOException {
        java.util.Arrays.fill(header, (byte) 0);
        e.writeEntryHeader(header, UTF8, starMode);
        write(header, 0, BLOCK);
    }

    /** The ustar name field of a pax entry only needs to be a readable hint; keep its ASCII tail. */
    private static String asciiTail(String name) {
        String ascii = name.replaceAll("[^\\x20-\\x7e]", "_");
        return ascii.length() <= TarConstants.NAMELEN ? ascii : ascii.substring(ascii.length() - TarConstants.NAMELEN);
    }

    /** {@code "<len> key=value\n"} where len counts the whole record, its own digits included. */
    static String paxRecord(String key, String value) {
        int body = key.getBytes(StandardCharsets.UTF_8).length + value.getBytes(StandardCharsets.UTF_8).length + 3;
        int len = body + Integer.toString(body).length();
        if (Integer.toString(len).length() != Integer.toString(body).length()) {
            len++;
        }
        return len + " " + key + "=" + value + "\n";
    }

    private void pad(long size) throws IOException {
        int rest = (int) (size % BLOCK);
        if (rest != 0) {
            write(ZEROS, 0, BLOCK - rest);
        }
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        int size = content.remaining();
        header(key + extension, size);
        put(content, sink);
        tarBytes += size;
        pad(size);
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        header(key + extension, size);
        copy(content, size, sink);
        tarBytes += size;
        pad(size);
    }

    @Override
    void writeTrailer() throws IOException {
        write(ZEROS, 0, 2 * BLOCK);
        int rest = (int) (tarBytes % RECORD);
        if (rest != 0) {
            write(ZEROS, 0, RECORD - rest);
        }
        if (sink != out) {
            // Closing the compressor writes its end mark; the stream under it ignores close.
            sink.close();
        }
    }
}
