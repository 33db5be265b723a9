package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.Serializable;

/**
 * Fixed-size records with a bytewise key at offset 0, packed back to back in a block:
 *
 * <pre>
 *  record i at offset i * recordBytes:
 *  +---------------- keyBytes ----------------+------- recordBytes - keyBytes -------+
 *  | key, compared as unsigned bytes          | payload                              |
 *  +------------------------------------------+--------------------------------------+
 * </pre>
 *
 * A block carries no header: its length is a multiple of {@code recordBytes}. The Sort
 * Benchmark layout is {@link #SORT_BENCHMARK} (100-byte records, 10-byte keys). Immutable.
 */
public record RecordLayout(int recordBytes, int keyBytes) implements Serializable {

    /** The Sort Benchmark's records: 100 bytes, the first 10 of them the key. */
    public static final RecordLayout SORT_BENCHMARK = new RecordLayout(100, 10);

    public RecordLayout {
        if (recordBytes < 1 || recordBytes > 1 << 20) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "recordBytes = " + recordBytes + " is out of range; allowed: 1..1048576");
        }
        if (keyBytes < 1 || keyBytes > recordBytes) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "keyBytes = " + keyBytes + " is out of range; allowed: 1.." + recordBytes);
        }
    }

    /** Records in a block of {@code bytes}; throws if {@code bytes} is not a whole number of records. */
    public long records(long bytes) {
        if (bytes % recordBytes != 0) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "a block of " + bytes + " bytes is not a whole number of "
                    + recordBytes + "-byte records");
        }
        return bytes / recordBytes;
    }
}
