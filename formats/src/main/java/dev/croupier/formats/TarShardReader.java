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
final class TarShardReader implements ShardReader {
    private static final int BLOCK = 512;

    private final Path shard;
    private final ShardFormat format;
    private final InputStream file;
    private final ArchiveStreams.Counted counted;
    private final TarArchiveInputStream tar;
    private String name;
    private int extStart;
    private long size;
    private long offset;
    private Content content;

    TarShardReader(Path shard, ShardFormat format) throws IOException {
        this.shard = shard;
        this.format = format;
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
        } catch (IOException e) {
            file.close();
            throw classify(e, 0, null);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    @Override
    public Path shard() {
        return shard;
    }

    @Override
    public ShardFormat format() {
        return format;
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
                throw new BadShardException(BadShardException.Cause.BAD_HEADER, shard, before, null,
                        "unreadable tar header: " + ex.getMessage(), ex);
            } finally {
                counted.tap(false);
            }
            if (e == null) {
                if (counted.count % BLOCK != 0) {
                    throw new BadShardException(BadShardException.Cause.TRUNCATED, shard,
                            counted.count - counted.count % BLOCK, null,
                            "tar stream ends inside a 512-byte header block", null);
                }
                content = null;
                return false;
            }
            if (!TarUtils.verifyCheckSum(counted.lastBlock())) {
                throw new BadShardException(BadShardException.Cause.BAD_HEADER, shard, counted.count - BLOCK,
                        e.getName(), "tar header checksum does not match the header", null);
            }
            if (!isRegular(e)) {
                continue;
            }
            String n = e.getName();
            while (n.startsWith("./")) {
                n = n.substring(2);
            }
            offset = counted.count - BLOCK;
            if (!MemberNames.isLocal(n)) {
                throw new BadShardException(BadShardException.Cause.UNSAFE_NAME, shard, offset, e.getName(),
                        "member name is absolute or climbs out with '..'; refusing it", null);
            }
            name = n;
            extStart = MemberNames.extensionStart(n);
            size = e.getSize();
            content = new Content(size);
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
        return new BadShardException(cause, shard, at, member, m, e);
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
        tar.close();
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
                throw classify(e, counted.count, name);
            }
        }

        @Override
        IOException truncated() {
            return new BadShardException(BadShardException.Cause.TRUNCATED, shard, counted.count, name,
                    "tar stream ends inside the member's content", null);
        }
    }
}
