package dev.croupier.formats;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A shard that cannot be read or written as its format demands. The message always names the
 * shard file and the byte offset where the problem was seen, and the member when one is
 * involved, so a user can find the bad bytes with {@code dd} or {@code xxd}.
 *
 * <p>Offsets are positions in the <em>uncompressed archive stream</em>: for plain tar, zip,
 * msgpack, TFRecord and Sort Benchmark files that is the file offset; for {@code .tar.gz} and
 * {@code .tar.lz4} it is the offset inside the decompressed tar, since that is where tar
 * headers live.
 *
 * <p>Thread-safety: immutable.
 */
public final class BadShardException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The small set of causes, so callers can branch on the kind of damage. */
    public enum Cause {
        /** The shard ends in the middle of a header, a member or a record. */
        TRUNCATED,
        /** A header (tar header, zip local header, msgpack map header) is malformed. */
        BAD_HEADER,
        /** A stored checksum (zip CRC-32, TFRecord masked CRC-32C) does not match the bytes. */
        CHECKSUM_MISMATCH,
        /** The bytes do not follow the format (wrong msgpack type, wrong record size...). */
        MALFORMED,
        /** A member name is absolute or climbs out with {@code ..} (zip-slip). */
        UNSAFE_NAME,
        /** The same key and extension appear twice in one shard and the reaction is abort. */
        DUPLICATE_FILE,
        /** A record cannot be stored in this format (e.g. two files in one TFRecord record). */
        UNREPRESENTABLE
    }

    private final Cause cause;
    private final transient Path shard;
    private final long offset;
    private final String member;

    /**
     * @param cause the kind of damage
     * @param shard the shard file
     * @param offset byte offset in the archive stream, or -1 when not known
     * @param member the member name involved, or {@code null}
     * @param detail what is wrong, in a few words
     * @param underlying the exception reporting it, or {@code null}
     */
    public BadShardException(Cause cause, Path shard, long offset, String member, String detail,
                             Throwable underlying) {
        super(message(cause, shard, offset, member, detail), underlying);
        this.cause = cause;
        this.shard = shard;
        this.offset = offset;
        this.member = member;
    }

    private static String message(Cause cause, Path shard, long offset, String member, String detail) {
        StringBuilder b = new StringBuilder("bad shard ").append(shard);
        if (offset >= 0) {
            b.append(" at byte offset ").append(offset);
        }
        if (member != null) {
            b.append(", member '").append(member).append('\'');
        }
        return b.append(": ").append(cause).append(": ").append(detail).toString();
    }

    /** @return the kind of damage */
    public Cause kind() {
        return cause;
    }

    /** @return the shard file */
    public Path shard() {
        return shard;
    }

    /** @return byte offset in the archive stream, or -1 when not known */
    public long offset() {
        return offset;
    }

    /** @return the member involved, or {@code null} */
    public String member() {
        return member;
    }
}
