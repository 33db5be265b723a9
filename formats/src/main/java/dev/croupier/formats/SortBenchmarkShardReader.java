package dev.croupier.formats;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * Design note: Sort Benchmark (gensort) reader. The file is a sequence of 100-byte records, a
 * 10-byte key then a 90-byte value; a record's key is the lower-case hex of its key bytes, so
 * that alphanumeric order of keys is the unsigned byte order the benchmark sorts by. Each record
 * is read whole into one reused 100-byte buffer.
 */
final class SortBenchmarkShardReader implements ShardReader {
    /** Key bytes per record. */
    static final int KEY_SIZE = 10;
    /** Value bytes per record. */
    static final int VALUE_SIZE = 90;
    /** Bytes per record. */
    static final int RECORD_SIZE = KEY_SIZE + VALUE_SIZE;
    /** Extension given to every record's value. */
    static final String EXTENSION = ".value";

    private final Path shard;
    private final InputStream in;
    private final byte[] record = new byte[RECORD_SIZE];
    private long offset = -RECORD_SIZE;
    private String key;
    private Content content;

    SortBenchmarkShardReader(Path shard) throws IOException {
        this.shard = shard;
        this.in = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
    }

    @Override
    public Path shard() {
        return shard;
    }

    @Override
    public ShardFormat format() {
        return ShardFormat.SORT_BENCHMARK;
    }

    @Override
    public boolean nextFile() throws IOException {
        int n = in.readNBytes(record, 0, RECORD_SIZE);
        if (n == 0) {
            content = null;
            return false;
        }
        offset += RECORD_SIZE;
        if (n < RECORD_SIZE) {
            throw new BadShardException(BadShardException.Cause.TRUNCATED, shard, offset, null,
                    "file ends inside a 100-byte record (" + n + " bytes)", null);
        }
        key = HexFormat.of().formatHex(record, 0, KEY_SIZE);
        content = new Content();
        return true;
    }

    @Override
    public String name() {
        return key + EXTENSION;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String extension() {
        return EXTENSION;
    }

    @Override
    public long size() {
        return VALUE_SIZE;
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
        in.close();
    }

    private final class Content extends ArchiveStreams.Bounded {
        Content() {
            super(VALUE_SIZE);
        }

        @Override
        int readSource(byte[] b, int off, int len) {
            System.arraycopy(record, RECORD_SIZE - (int) left, b, off, len);
            return len;
        }

        @Override
        IOException truncated() {
            return new BadShardException(BadShardException.Cause.TRUNCATED, shard, offset, name(),
                    "record ends early", null);
        }
    }
}
