package dev.croupier.futures.internal;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.croupier.futures.wire.Chunk;
import dev.croupier.futures.wire.DataGrpc;
import dev.croupier.futures.wire.ObjectKey;
import dev.croupier.futures.wire.PullRequest;
import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * The {@code Chunk} of {@code data.proto} as {@code Data.Pull} moves it, on both ends, without
 * protobuf-java's message objects: the holder writes a chunk from a view of its store
 * ({@link Sending}), the puller parses one and copies its payload straight into its own store
 * ({@link ChunkFrame}). protobuf-java would copy every payload onto the heap on both ends (its
 * {@code ByteString} of a direct buffer is a copy, and so is a parsed {@code bytes} field).
 *
 * <pre>
 *  Chunk (protobuf wire format, fields in number order as protobuf-java writes them)
 *  +---------------------+----------------+-------------------+---------------------------+
 *  | 0x0A len ObjectKey  | 0x10 varint    | 0x19 fixed64      | 0x22 len  payload ...     |
 *  | id (first only)     | total (first)  | session (put only)| data: the frame's bytes   |
 *  +---------------------+----------------+-------------------+---------------------------+
 * </pre>
 *
 * Data must be the last field; anything after it is refused. Where grpc-java cannot lend its
 * buffers (no {@link Detachable} stream), the payload is read through a small scratch array.
 * An arriving chunk is not thread-safe; close it once its payload is copied.
 */
final class ChunkFrame implements AutoCloseable {

    /** Parses pull responses into arriving chunks: the client side of {@code Data.Pull}. */
    static final MethodDescriptor.Marshaller<ChunkFrame> ARRIVING = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(ChunkFrame value) {
            throw new UnsupportedOperationException("arriving chunks are only received");
        }

        @Override
        public ChunkFrame parse(InputStream stream) {
            InputStream kept = stream instanceof Detachable d ? d.detach() : stream;
            try {
                return new ChunkFrame(kept);
            } catch (IOException e) {
                closeQuietly(kept);
                throw new UncheckedIOException("malformed chunk: " + e.getMessage(), e);
            }
        }
    };

    /** Writes chunks from views of a store: the server side of {@code Data.Pull}. */
    static final MethodDescriptor.Marshaller<Sending> SENDING = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Sending value) {
            return value.new Encoded();
        }

        @Override
        public Sending parse(InputStream stream) {
            throw new UnsupportedOperationException("sending chunks are only sent");
        }
    };

    /** {@code Data.Pull} as the puller calls it. */
    static final MethodDescriptor<PullRequest, ChunkFrame> PULL =
            DataGrpc.getPullMethod().toBuilder(DataGrpc.getPullMethod().getRequestMarshaller(), ARRIVING).build();

    /** {@code Data.Pull} as the holder serves it. */
    static final MethodDescriptor<PullRequest, Sending> PULL_SERVED =
            DataGrpc.getPullMethod().toBuilder(DataGrpc.getPullMethod().getRequestMarshaller(), SENDING).build();

    /**
     * A chunk to send: its header fields and a view of its payload, which must stay readable
     * until the chunk is handed to gRPC ({@code onNext} drains it into the transport's buffers
     * before it returns). The payload goes to the transport through {@code scratch}, which the
     * sender of one stream reuses for every chunk.
     */
    static final class Sending {
        private final byte[] header;
        private final MemorySegment data;
        private final byte[] scratch;

        /** A chunk with {@code id} and {@code total} when it is an object's first, else with null and -1. */
        Sending(ObjectKey id, long total, MemorySegment data, byte[] scratch) {
            byte[] fields = id == null ? new byte[0] : Chunk.newBuilder().setId(id).setTotal(total).build().toByteArray();
            int length = Math.toIntExact(data.byteSize());
            // As protobuf writes it: an empty payload is no data field at all.
            this.header = new byte[fields.length + (length == 0 ? 0 : 1 + CodedOutputStream.computeUInt32SizeNoTag(length))];
            System.arraycopy(fields, 0, header, 0, fields.length);
            if (length > 0) {
                CodedOutputStream out = CodedOutputStream.newInstance(header, fields.length, header.length - fields.length);
                try {
                    out.writeTag(4, 2); // data, length-delimited
                    out.writeUInt32NoTag(length);
                } catch (IOException cannot) {
                    throw new UncheckedIOException(cannot); // the array was sized for exactly these bytes
                }
            }
            this.data = data;
            this.scratch = scratch;
        }

        /** The chunk's bytes for gRPC's framer, which drains them ({@link Drainable}) in one pass. */
        private final class Encoded extends InputStream implements Drainable, KnownLength {
            private long position;

            private long size() {
                return header.length + data.byteSize();
            }

            @Override
            public int available() {
                return (int) (size() - position);
            }

            @Override
            public int drainTo(OutputStream target) throws IOException {
                int drained = available();
                for (int n; (n = read(scratch, 0, scratch.length)) > 0; ) {
                    target.write(scratch, 0, n);
                }
                return drained;
            }

            @Override
            public int read() {
                return read(scratch, 0, 1) == 1 ? scratch[0] & 0xFF : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (position >= size()) {
                    return len == 0 ? 0 : -1;
                }
                int n = (int) Math.min(len, size() - position);
                if (position < header.length) {
                    n = (int) Math.min(n, header.length - position);
                    System.arraycopy(header, (int) position, b, off, n);
                } else {
                    MemorySegment.copy(data, ValueLayout.JAVA_BYTE, position - header.length, b, off, n);
                }
                position += n;
                return n;
            }
        }
    }

    private final InputStream in;
    private ObjectKey id;
    private long total = -1;
    private int dataBytes;

    private ChunkFrame(InputStream in) throws IOException {
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
        // Asked once: over a chunk's many HTTP/2 frames the answer costs a walk of them all.
        boolean lent = in instanceof HasByteBuffer h && h.byteBufferSupported();
        while (left > 0) {
            int n;
            if (lent && in instanceof HasByteBuffer h) {
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
