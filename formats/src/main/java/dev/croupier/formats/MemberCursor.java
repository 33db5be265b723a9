package dev.croupier.formats;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;

/**
 * What every {@link ShardReader} keeps the same way: the shard, its format, the current member
 * (name, size, offset and content stream, with the guard that there is one), the errors that
 * name the shard, and closing the source the reader decodes. A reader only decodes its format's
 * headers and calls {@link #member} or {@link #end} from {@code nextFile}.
 *
 * <p>Not thread-safe, as readers are not.
 */
abstract class MemberCursor implements ShardReader {
    final Path shard;
    private final ShardFormat format;
    private Closeable source;
    private String name;
    private int extensionStart;
    private long size;
    private long offset;
    private ArchiveStreams.Bounded content;

    MemberCursor(Path shard, ShardFormat format) {
        this.shard = shard;
        this.format = format;
    }

    /** The stream or file {@link #close} closes: set once the subclass has opened it. */
    final void source(Closeable opened) {
        this.source = opened;
    }

    /** Makes the member called {@code name} current (its key and extension split by {@link MemberNames}). */
    final void member(String name, long size, long offset, ArchiveStreams.Bounded content) {
        member(name, MemberNames.extensionStart(name), size, offset, content);
    }

    /** Makes the member with {@code key} and {@code extension} current. */
    final void member(String key, String extension, long size, long offset, ArchiveStreams.Bounded content) {
        member(key + extension, key.length(), size, offset, content);
    }

    private void member(String name, int extensionStart, long size, long offset, ArchiveStreams.Bounded content) {
        this.name = name;
        this.extensionStart = extensionStart;
        this.size = size;
        this.offset = offset;
        this.content = content;
    }

    /** Ends the shard: there is no current member any more. Returns false, as {@code nextFile} does then. */
    final boolean end() {
        content = null;
        return false;
    }

    /** The current member's content stream, or null before the first and after the last. */
    final ArchiveStreams.Bounded current() {
        return content;
    }

    /** An error at {@code at} in this shard, in the member called {@code member} (or null). */
    final BadShardException bad(BadShardException.Cause cause, long at, String member, String message, Throwable why) {
        return new BadShardException(cause, shard, at, member, message, why);
    }

    /** The refusal of a member or sample name that is absolute or climbs out with {@code ..}. */
    final BadShardException unsafeName(long at, String member, String what) {
        return bad(BadShardException.Cause.UNSAFE_NAME, at, member,
                what + " is absolute or climbs out with '..'; refusing it", null);
    }

    @Override
    public final Path shard() {
        return shard;
    }

    @Override
    public final ShardFormat format() {
        return format;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String key() {
        return name.substring(0, extensionStart);
    }

    @Override
    public final String extension() {
        return name.substring(extensionStart);
    }

    @Override
    public final long size() {
        return size;
    }

    @Override
    public final long offset() {
        return offset;
    }

    @Override
    public final InputStream content() {
        if (content == null) {
            throw new IllegalStateException("no current file: call nextFile() first");
        }
        return content;
    }

    @Override
    public void close() throws IOException {
        content = null;
        if (source != null) {
            source.close();
        }
    }
}
