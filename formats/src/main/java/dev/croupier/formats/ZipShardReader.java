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
final class ZipShardReader extends MemberCursor {
    private final ZipFile zip;
    private final Enumeration<ZipArchiveEntry> entries;
    private ZipArchiveEntry entry;
    private InputStream open;

    ZipShardReader(Path shard) throws IOException {
        super(shard, ShardFormat.ZIP);
        try {
            this.zip = ZipFile.builder().setPath(shard).get();
        } catch (IOException e) {
            throw bad(BadShardException.Cause.BAD_HEADER, Files.size(shard), null,
                    "no readable zip central directory: " + e.getMessage(), e);
        }
        this.entries = zip.getEntriesInPhysicalOrder();
        source(() -> {
            try {
                closeEntry();
            } finally {
                zip.close();
            }
        });
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
                throw unsafeName(e.getLocalHeaderOffset(), n, "member name");
            }
            entry = e;
            member(n, e.getSize(), e.getLocalHeaderOffset(), new Content(e.getSize()));
            return true;
        }
        entry = null;
        return end();
    }

    private void closeEntry() throws IOException {
        if (open != null) {
            open.close();
            open = null;
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
                        throw bad(BadShardException.Cause.MALFORMED, offset(), name(),
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
                throw bad(BadShardException.Cause.MALFORMED, offset(), name(),
                        "cannot decode zip entry: " + e.getMessage(), e);
            }
        }

        @Override
        void atEnd() throws IOException {
            long stored = entry.getCrc();
            if (stored != -1 && stored != crc.getValue()) {
                throw bad(BadShardException.Cause.CHECKSUM_MISMATCH, offset(), name(),
                        String.format("zip CRC-32 mismatch: stored %08x, computed %08x", stored, crc.getValue()), null);
            }
        }

        @Override
        IOException truncated() {
            return bad(BadShardException.Cause.TRUNCATED, offset(), name(),
                    "zip entry data ends before its declared " + entry.getSize() + " bytes", null);
        }
    }
}
