package dev.croupier.futures.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.croupier.futures.wire.ObjectKey;
import io.grpc.Detachable;
import io.grpc.HasByteBuffer;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A {@code Chunk} of {@code data.proto} as a puller receives it: the header fields parsed, the
 * payload left in the transport's buffers until {@link #copyTo} copies it straight into its
 * destination (a store's object), so no chunk is ever copied onto the Java heap.
 *
 * <pre>
 *  Chunk (protobuf wire format, fields in number order as protobuf-java writes them)
 *  +---------------------+----------------+-------------------+---------------------------+
 *  | 0x0A len ObjectKey  | 0x10 varint    | 0x19 fixed64      | 0x22 len  payload ...     |
 *  | id (first only)     | total (first)  | session (first)   | data: the frame's bytes   |
 *  +---------------------+----------------+-------------------+---------------------------+
 * </pre>
 *
 * Data must be the last field; anything after it is refused. Where grpc-java cannot lend its
 * buffers (no {@link Detachable} stream), the payload is read through a small scratch array.
 * Not thread-safe; close it once its payload is copied.
 */
final class ArrivingChunk implements AutoCloseable {

    /** Parses pull responses into arriving chunks: the client side of {@code Data.Pull}. */
    static final MethodDescriptor.Marshaller<ArrivingChunk> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(ArrivingChunk value) {
            throw new UnsupportedOperationException("arriving chunks are only received");
        }

        @Override
        public ArrivingChunk parse(InputStream stream) {
            InputStream kept = stream instanceof Detachable d ? d.detach() : stream;
            try {
                return new ArrivingChunk(kept);
            } catch (IOException e) {
                closeQuietly(kept);
                throw new UncheckedIOException("malformed chunk: " + e.getMessage(), e);
            }
        }
    };

    /** The method {@code Data.Pull} with this class as its response. */
    static final MethodDescriptor<dev.croupier.futures.wire.PullRequest, ArrivingChunk> PULL =
            dev.croupier.futures.wire.DataGrpc.getPullMethod().toBuilder(
                    dev.croupier.futures.wire.DataGrpc.getPullMethod().getRequestMarshaller(), MARSHALLER).build();

    private final InputStream in;
    private ObjectKey id;
    private long total = -1;
    private int dataBytes;

    private ArrivingChunk(InputStream in) throws IOException {
        this.in = in;
        while (true) {
            int tag = readVarint32(in, true);
            if (tag == -1) {
                return; // no data field: an empty chunk
            }
            switch (tag) {
                case (1 << 3) | 2 -> id = ObjectKey.parseFrom(readBytes(in, readVarint32(in, false)));
                case (2 << 3) -> total = readVarint64(in);
                case (3 << 3) | 1 -> skipFully(in, 8);
                case (4 << 3) | 2 -> {
                    dataBytes = readVarint32(in, false);
                    return;
                }
                default -> throw new InvalidProtocolBufferException("unexpected chunk field tag " + tag);
            }
        }
    }

    /** The object's id (first chunk only), else null. */
    ObjectKey id() {
        return id;
    }

    /** The frame's total size (first chunk only), else -1. */
    long total() {
        return total;
    }

    int dataBytes() {
        return dataBytes;
    }

    /** Copies the payload to {@code target} at {@code offset}; with a null target, skips it. */
    void copyTo(MemorySegment target, long offset) throws IOException {
        int left = dataBytes;
        byte[] scratch = null;
        while (left > 0) {
            int n;
            if (in instanceof HasByteBuffer h && h.byteBufferSupported()) {
                ByteBuffer b = h.getByteBuffer();
                n = Math.min(b.remaining(), left);
                if (target != null) {
                    MemorySegment.copy(MemorySegment.ofBuffer(b), 0, target, offset, n);
                }
                skipFully(in, n);
            } else {
                if (scratch == null) {
                    scratch = new byte[Math.min(left, 64 << 10)];
                }
                n = in.read(scratch, 0, Math.min(scratch.length, left));
                if (n < 0) {
                    throw new InvalidProtocolBufferException("chunk ended " + left + " bytes early");
                }
                if (target != null) {
                    MemorySegment.copy(MemorySegment.ofArray(scratch), 0, target, offset, n);
                }
            }
            offset += n;
            left -= n;
        }
        if (in.read() != -1) {
            throw new InvalidProtocolBufferException("a chunk has fields after its data");
        }
    }

    @Override
    public void close() {
        closeQuietly(in);
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // releasing transport buffers cannot fail in a way a reader could act on
        }
    }

    private static int readVarint32(InputStream in, boolean endAllowed) throws IOException {
        long v = readVarint(in, endAllowed);
        if (v > Integer.MAX_VALUE) {
            throw new InvalidProtocolBufferException("varint " + v + " does not fit a length or tag");
        }
        return (int) v;
    }

    private static long readVarint64(InputStream in) throws IOException {
        return readVarint(in, false);
    }

    private static long readVarint(InputStream in, boolean endAllowed) throws IOException {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = in.read();
            if (b < 0) {
                if (shift == 0 && endAllowed) {
                    return -1;
                }
                throw new InvalidProtocolBufferException("chunk ended inside a varint");
            }
            value |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new InvalidProtocolBufferException("malformed varint in a chunk");
    }

    private static byte[] readBytes(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new InvalidProtocolBufferException("chunk ended inside a field");
        }
        return b;
    }

    private static void skipFully(InputStream in, long n) throws IOException {
        while (n > 0) {
            long skipped = in.skip(n);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new InvalidProtocolBufferException("chunk ended inside a field");
                }
                skipped = 1;
            }
            n -= skipped;
        }
    }
}
