package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.zip.CRC32;

import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipFile;

/**
 * Design note: zip reader over Commons Compress's {@link ZipFile}, which trusts the central
 * directory (the authoritative index; local headers may lack sizes when a data descriptor
 * follows) and opens one entry at a time, so no whole shard is in memory. Entries are visited
 * in physical order, so offsets grow as in the other formats. The CRC-32 of each entry is
 * computed while its content is read and compared with the stored one at the end, since
 * Commons Compress does not check it. Directories and symlinks are skipped.
 */
final class ZipShardReader implements ShardReader {
    private final Path shard;
    private final ZipFile zip;
    private final Enumeration<ZipArchiveEntry> entries;
    private ZipArchiveEntry entry;
    private String name;
    private int extStart;
    private InputStream open;
    private Content content;

    ZipShardReader(Path shard) throws IOException {
        this.shard = shard;
        try {
            this.zip = ZipFile.builder().setPath(shard).get();
        } catch (IOException e) {
            throw new BadShardException(BadShardException.Cause.BAD_HEADER, shard, Files.size(shard), null,
                    "no readable zip central directory: " + e.getMessage(), e);
        }
        this.entries = zip.getEntriesInPhysicalOrder();
    }

    @Override
    public Path shard() {
        return shard;
    }

    @Override
    public ShardFormat format() {
        return ShardFormat.ZIP;
    }

    @Override
    public boolean nextFile() throws IOException {
        closeEntry();
        while (entries.hasMoreElements()) {
            ZipArchiveEntry e = entries.nextElement();
            if (e.isDirectory() || e.isUnixSymlink()) {
                continue;
            }
            String n = e.getName();
            if (!MemberNames.isLocal(n)) {
                throw new BadShardException(BadShardException.Cause.UNSAFE_NAME, shard, e.getLocalHeaderOffset(), n,
                        "member name is absolute or climbs out with '..'; refusing it", null);
            }
            entry = e;
            name = n;
            extStart = MemberNames.extensionStart(n);
            content = new Content(e.getSize());
            return true;
        }
        entry = null;
        content = null;
        return false;
    }

    private void closeEntry() throws IOException {
        if (open != null) {
            open.close();
            open = null;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String key() {
        return name.substring(0, extStart);
    }

    @Override
    public String extension() {
        return name.substring(extStart);
    }

    @Override
    public long size() {
        return entry.getSize();
    }

    @Override
    public long offset() {
        return entry.getLocalHeaderOffset();
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
        try {
            closeEntry();
        } finally {
            zip.close();
        }
    }

    private final class Content extends ArchiveStreams.Bounded {
        private final CRC32 crc = new CRC32();

        Content(long size) {
            super(size);
        }

        @Override
        int readSource(byte[] b, int off, int len) throws IOException {
            try {
                if (open == null) {
                    if (!zip.canReadEntryData(entry)) {
                        throw new BadShardException(BadShardException.Cause.MALFORMED, shard, offset(), name,
                                "unsupported zip compression method " + entry.getMethod(), null);
                    }
                    open = zip.getInputStream(entry);
                }
                int n = open.read(b, off, len);
                if (n > 0) {
                    crc.update(b, off, n);
                }
                return n;
            } catch (BadShardException e) {
                throw e;
            } catch (IOException | RuntimeException e) {
                throw new BadShardException(BadShardException.Cause.MALFORMED, shard, offset(), name,
                        "cannot decode zip entry: " + e.getMessage(), e);
            }
        }

        @Override
        void atEnd() throws IOException {
            long stored = entry.getCrc();
            if (stored != -1 && stored != crc.getValue()) {
                throw new BadShardException(BadShardException.Cause.CHECKSUM_MISMATCH, shard, offset(), name,
                        String.format("zip CRC-32 mismatch: stored %08x, computed %08x", stored, crc.getValue()), null);
            }
        }

        @Override
        IOException truncated() {
            return new BadShardException(BadShardException.Cause.TRUNCATED, shard, offset(), name,
                    "zip entry data ends before its declared " + entry.getSize() + " bytes", null);
        }
    }
}
