package dev.croupier.formats;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import net.jpountz.lz4.LZ4FrameInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.archivers.tar.TarUtils;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

/**
 * Design note: tar, tar.gz and tar.lz4 reader over Commons Compress, which understands ustar,
 * GNU (long names, base-256 sizes) and pax headers. The decompressed stream is counted, so the
 * offset of a member is the position of its own 512-byte header in the tar stream. Commons
 * Compress reports a partial header at the end as a clean end of archive; we catch that case by
 * the count not landing on a 512-byte boundary. Commons Compress does not check header
 * checksums either, so the counted stream keeps the header block it just parsed and we verify it. Only regular files become files; directories,
 * links and devices are skipped. A leading {@code ./} (what {@code tar -C dir .} writes) is dropped.
 */
final class TarShardReader extends MemberCursor {
    private static final int BLOCK = 512;

    private final InputStream file;
    private final ArchiveStreams.Counted counted;
    private final TarArchiveInputStream tar;

    TarShardReader(Path shard, ShardFormat format) throws IOException {
        super(shard, format);
        this.file = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
        try {
            InputStream plain = switch (format) {
                case TAR -> file;
                case TAR_GZ -> GzipCompressorInputStream.builder().setInputStream(file)
                        .setDecompressConcatenated(true).get();
                case TAR_LZ4 -> new LZ4FrameInputStream(file);
                default -> throw new IllegalArgumentException("not a tar format: " + format);
            };
            this.counted = new ArchiveStreams.Counted(plain);
            this.tar = new TarArchiveInputStream(counted, "UTF-8");
            source(tar);
        } catch (IOException e) {
            file.close();
            throw classify(e, 0, null);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }



    @Override
    public boolean nextFile() throws IOException {
        while (true) {
            TarArchiveEntry e;
            long before = counted.count;
            try {
                counted.tap(true);
                e = tar.getNextEntry();
            } catch (IOException ex) {
                throw classify(ex, before, null);
            } catch (RuntimeException ex) {
                throw bad(BadShardException.Cause.BAD_HEADER, before, null,
                        "unreadable tar header: " + ex.getMessage(), ex);
            } finally {
                counted.tap(false);
            }
            if (e == null) {
                if (counted.count % BLOCK != 0) {
                    throw bad(BadShardException.Cause.TRUNCATED,
                            counted.count - counted.count % BLOCK, null,
                            "tar stream ends inside a 512-byte header block", null);
                }
                return end();
            }
            if (!TarUtils.verifyCheckSum(counted.lastBlock())) {
                throw bad(BadShardException.Cause.BAD_HEADER, counted.count - BLOCK,
                        e.getName(), "tar header checksum does not match the header", null);
            }
            if (!isRegular(e)) {
                continue;
            }
            String n = e.getName();
            while (n.startsWith("./")) {
                n = n.substring(2);
            }
            long offset = counted.count - BLOCK;
            if (!MemberNames.isLocal(n)) {
                throw unsafeName(offset, e.getName(), "member name");
            }
            member(n, e.getSize(), offset, new Content(e.getSize()));
            return true;
        }
    }

    private static boolean isRegular(TarArchiveEntry e) {
        byte flag = e.getLinkFlag();
        return (flag == TarConstants.LF_NORMAL || flag == TarConstants.LF_OLDNORM || flag == TarConstants.LF_CONTIG)
                && !e.getName().endsWith("/");
    }

    private BadShardException classify(IOException e, long at, String member) {
        if (e instanceof BadShardException b) {
            return b;
        }
        String m = String.valueOf(e.getMessage());
        BadShardException.Cause cause;
        if (e instanceof EOFException || m.contains("Truncated") || m.contains("truncated")
                || m.contains("Unexpected end")) {
            cause = BadShardException.Cause.TRUNCATED;
        } else if (m.contains("CRC") || m.contains("checksum") || m.contains("Checksum")) {
            cause = BadShardException.Cause.CHECKSUM_MISMATCH;
        } else if (member == null) {
            cause = BadShardException.Cause.BAD_HEADER;
        } else {
            cause = BadShardException.Cause.MALFORMED;
        }
        return bad(cause, at, member, m, e);
    }








    private final class Content extends ArchiveStreams.Bounded {
        Content(long size) {
            super(size);
        }

        @Override
        int readSource(byte[] b, int off, int len) throws IOException {
            try {
                return tar.read(b, off, len);
            } catch (IOException e) {
                throw classify(e, counted.count, name());
            }
        }

        @Override
        IOException truncated() {
            return bad(BadShardException.Cause.TRUNCATED, counted.count, name(),
                    "tar stream ends inside the member's content", null);
        }
    }
}
