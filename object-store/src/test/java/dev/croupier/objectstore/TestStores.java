package dev.croupier.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/** Shared fixtures: deterministic object contents and file counting for leak checks. */
final class TestStores {

    private static final AtomicLong NEXT = new AtomicLong(1);

    private TestStores() {
    }

    static ObjectId freshId() {
        return new ObjectId(0xC0FFEEL, NEXT.getAndIncrement());
    }

    /** Bytes derived from (seed, index) so any byte can be checked without keeping a copy. */
    static byte byteAt(long seed, long index) {
        long x = (seed ^ 0x9E3779B97F4A7C15L) + index * 0xBF58476D1CE4E5B9L;
        x ^= x >>> 31;
        return (byte) x;
    }

    static void fill(MemorySegment segment, long seed) {
        long n = segment.byteSize();
        for (long i = 0; i < n; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, byteAt(seed, i));
        }
    }

    static MemorySegment bytes(Arena arena, long size, long seed) {
        MemorySegment segment = arena.allocate(Math.max(1, size)).asSlice(0, size);
        fill(segment, seed);
        return segment;
    }

    /** Index of the first byte that differs from the (seed) pattern, or -1. */
    static long firstMismatch(MemorySegment segment, long seed) {
        long n = segment.byteSize();
        for (long i = 0; i < n; i++) {
            if (segment.get(ValueLayout.JAVA_BYTE, i) != byteAt(seed, i)) {
                return i;
            }
        }
        return -1;
    }

    /** Reads a whole object through {@link ObjectStore#openReader}, {@code chunk} bytes per read. */
    static byte[] readAll(ObjectStore store, ObjectId id, int chunk) throws Exception {
        try (ObjectReader reader = store.openReader(id)) {
            byte[] out = new byte[Math.toIntExact(reader.size())];
            for (int at = 0; at < out.length; at += chunk) {
                int n = Math.min(chunk, out.length - at);
                MemorySegment.copy(reader.read(at, n), 0, MemorySegment.ofArray(out), at, n);
            }
            return out;
        }
    }

    static long countFiles(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> !p.equals(dir)).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
