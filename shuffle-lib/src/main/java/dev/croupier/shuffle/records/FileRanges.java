package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.TaskOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A record file cut into M whole-record ranges, one per map task, each read with one
 * positional read. Holds the path as a string so tasks can carry it. Immutable.
 */
record FileRanges(String path, long bytes, int recordBytes, int ranges) implements java.io.Serializable {

    static FileRanges of(Path file, RecordLayout layout, int ranges) {
        long bytes;
        try {
            bytes = java.nio.file.Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the size of " + file, e);
        }
        if (bytes % layout.recordBytes() != 0) {
            throw new CroupierException(ErrorCode.BAD_INPUT, file + ": " + bytes + " bytes is not a whole number of "
                    + layout.recordBytes() + "-byte records (the last one starts at byte offset "
                    + (bytes / layout.recordBytes() * layout.recordBytes()) + ")");
        }
        return new FileRanges(file.toString(), bytes, layout.recordBytes(), ranges);
    }

    long start(int range) {
        long records = bytes / recordBytes;
        return records * range / ranges * recordBytes;
    }

    long length(int range) {
        return start(range + 1) - start(range);
    }

    /**
     * Range {@code range} of the file, read into task memory ({@link TaskOutput}): inside a map
     * task that is store memory the task frees when it ends, so no heap buffer is zeroed and
     * collected per map.
     */
    MemorySegment read(int range) throws IOException {
        long length = length(range);
        if (length > Integer.MAX_VALUE - 8) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "a map input of " + length + " bytes of " + path
                    + " is over 2 GiB; use more mappers");
        }
        MemorySegment buffer = TaskOutput.allocate(length);
        ByteBuffer bb = buffer.asByteBuffer();
        try (FileChannel in = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            long position = start(range);
            while (bb.hasRemaining()) {
                int n = in.read(bb, position);
                if (n < 0) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, path + " ended at byte offset " + position
                            + " while reading bytes " + start(range) + ".." + (start(range) + length));
                }
                position += n;
            }
        }
        return buffer;
    }

    /** {@code count} keys of random records of range {@code range}, read with small positional reads. */
    MemorySegment sampleKeys(int range, int keyBytes, int count, long seed) throws IOException {
        long records = length(range) / recordBytes;
        byte[] keys = new byte[records == 0 ? 0 : count * keyBytes];
        if (records == 0) {
            return MemorySegment.ofArray(keys);
        }
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        try (FileChannel in = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            for (int i = 0; i < count; i++) {
                long position = start(range) + random.nextLong(records) * recordBytes;
                ByteBuffer bb = ByteBuffer.wrap(keys, i * keyBytes, keyBytes);
                while (bb.hasRemaining()) {
                    if (in.read(bb, position + bb.position() - i * keyBytes) < 0) {
                        throw new CroupierException(ErrorCode.BAD_INPUT, path + " ended at byte offset " + position);
                    }
                }
            }
        }
        return MemorySegment.ofArray(keys);
    }
}
