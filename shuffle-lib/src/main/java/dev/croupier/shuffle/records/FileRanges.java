package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A record file cut into M whole-record ranges, one per map task. Holds the path as a string so
 * tasks can carry it. Immutable.
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
     * Range {@code range} of the file in memory: read with {@code O_DIRECT} into the map task's
     * memory where the file system allows it ({@link DirectRangeIo}: on a virtual machine,
     * faulting in a cold mapped file cost the CPU about as much as copying it), else mapped
     * read-only from the page cache (no copy, no store memory). A mapping is released with its
     * automatic arena once the task has dropped it; task memory when the task ends.
     */
    MemorySegment read(int range) throws IOException {
        long length = length(range);
        try (FileChannel in = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            long size = in.size();
            if (size < start(range) + length) {
                // Mapping past the end would fault on first touch; say where the data stopped.
                throw new CroupierException(ErrorCode.BAD_INPUT, path + " ended at byte offset " + size
                        + " while reading bytes " + start(range) + ".." + (start(range) + length));
            }
            MemorySegment direct = DirectRangeIo.read(path, start(range), length);
            return direct != null ? direct : in.map(FileChannel.MapMode.READ_ONLY, start(range), length, Arena.ofAuto());
        }
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
