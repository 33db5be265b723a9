package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import dev.croupier.futures.wire.Chunk;
import dev.croupier.futures.wire.ObjectKey;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The puller's parser of {@code Chunk} against protobuf-java's: any chunk protobuf writes reads
 * back with the same id, total and payload, copied to any offset of its target; a truncated
 * chunk is refused.
 */
class ArrivingChunkProperties {

    @Property(tries = 300)
    void readsWhatProtobufWrites(@ForAll boolean first, @ForAll long high, @ForAll long low,
                                 @ForAll @IntRange(min = 0, max = 200_000) int size,
                                 @ForAll @IntRange(min = 0, max = 64) int offset) throws IOException {
        byte[] data = new byte[size];
        new java.util.Random(high ^ size).nextBytes(data);
        Chunk.Builder b = Chunk.newBuilder().setData(ByteString.copyFrom(data));
        if (first) {
            b.setId(ObjectKey.newBuilder().setHigh(high).setLow(low)).setTotal(size + 1000L).setSession(low);
        }
        byte[] wire = b.build().toByteArray();
        try (ArrivingChunk c = ArrivingChunk.MARSHALLER.parse(new ByteArrayInputStream(wire))) {
            assertEquals(first ? size + 1000L : -1, c.total());
            assertEquals(first ? ObjectKey.newBuilder().setHigh(high).setLow(low).build() : null, c.id());
            assertEquals(size, c.dataBytes());
            byte[] target = new byte[offset + size];
            c.copyTo(MemorySegment.ofArray(target), offset);
            assertArrayEquals(data, Arrays.copyOfRange(target, offset, offset + size));
        }
    }

    @Property(tries = 50)
    void aTruncatedChunkIsRefused(@ForAll @IntRange(min = 1, max = 5000) int size, @ForAll @IntRange(min = 1, max = 100) int cut) {
        byte[] wire = Chunk.newBuilder().setTotal(size).setData(ByteString.copyFrom(new byte[size])).build().toByteArray();
        byte[] truncated = Arrays.copyOf(wire, Math.max(0, wire.length - cut));
        assertThrows(RuntimeException.class, () -> {
            try (ArrivingChunk c = ArrivingChunk.MARSHALLER.parse(new ByteArrayInputStream(truncated))) {
                if (c.dataBytes() != size) {
                    throw new UncheckedIOException(new IOException("short header"));
                }
                c.copyTo(MemorySegment.ofArray(new byte[size]), 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
