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
final class SortBenchmarkShardReader extends MemberCursor {
    /** Key bytes per record. */
    static final int KEY_SIZE = 10;
    /** Value bytes per record. */
    static final int VALUE_SIZE = 90;
    /** Bytes per record. */
    static final int RECORD_SIZE = KEY_SIZE + VALUE_SIZE;
    /** Extension given to every record's value. */
    static final String EXTENSION = ".value";

    private final InputStream in;
    private final byte[] record = new byte[RECORD_SIZE];
    private long position;

    SortBenchmarkShardReader(Path shard) throws IOException {
        super(shard, ShardFormat.SORT_BENCHMARK);
        this.in = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
        source(in);
    }



    @Override
    public boolean nextFile() throws IOException {
        int n = in.readNBytes(record, 0, RECORD_SIZE);
        if (n == 0) {
            return end();
        }
        long offset = position;
        position += RECORD_SIZE;
        if (n < RECORD_SIZE) {
            throw bad(BadShardException.Cause.TRUNCATED, offset, null,
                    "file ends inside a 100-byte record (" + n + " bytes)", null);
        }
        member(HexFormat.of().formatHex(record, 0, KEY_SIZE), EXTENSION, VALUE_SIZE, offset, new Content());
        return true;
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
            return bad(BadShardException.Cause.TRUNCATED, offset(), name(),
                    "record ends early", null);
        }
    }
}
