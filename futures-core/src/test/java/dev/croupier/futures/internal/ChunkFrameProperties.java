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
 * Both ends of {@code Chunk} against protobuf-java: any chunk protobuf writes reads back with
 * the same id, total and payload, copied to any offset of its target; a truncated chunk is
 * refused; a chunk the holder sends from a store view is the bytes protobuf writes, whether
 * gRPC drains it or reads it.
 */
class ChunkFrameProperties {

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
        try (ChunkFrame c = ChunkFrame.ARRIVING.parse(new ByteArrayInputStream(wire))) {
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
            try (ChunkFrame c = ChunkFrame.ARRIVING.parse(new ByteArrayInputStream(truncated))) {
                if (c.dataBytes() != size) {
                    throw new UncheckedIOException(new IOException("short header"));
                }
                c.copyTo(MemorySegment.ofArray(new byte[size]), 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @Property(tries = 300)
    void sendsWhatProtobufWrites(@ForAll boolean first, @ForAll long high, @ForAll long low,
                                 @ForAll @IntRange(min = 0, max = 200_000) int size,
                                 @ForAll @IntRange(min = 1, max = 70_000) int scratch,
                                 @ForAll boolean drained) throws IOException {
        byte[] data = new byte[size];
        new java.util.Random(low ^ size).nextBytes(data);
        Chunk.Builder b = Chunk.newBuilder().setData(ByteString.copyFrom(data));
        ObjectKey id = ObjectKey.newBuilder().setHigh(high).setLow(low).build();
        if (first) {
            b.setId(id).setTotal(size + 7L);
        }
        ChunkFrame.Sending sending = new ChunkFrame.Sending(first ? id : null, size + 7L,
                MemorySegment.ofArray(data), new byte[scratch]);
        java.io.InputStream encoded = ChunkFrame.SENDING.stream(sending);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        if (drained) {
            assertEquals(encoded.available(), ((io.grpc.Drainable) encoded).drainTo(out));
        } else {
            encoded.transferTo(out);
        }
        assertArrayEquals(b.build().toByteArray(), out.toByteArray());
    }
}
