package dev.croupier.shuffle.reshard;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Design note: the byte frame of the reshard tasks' small typed results
 * ({@link ReshardTasks.ExtractionReport}, {@link ReshardTasks.Routes},
 * {@link ReshardTasks.CreatedShard}, {@link PlanSummary}). A task result crosses from a node process to the driver
 * or to another task, and the runtime reads Java-serialized values back only for classes on
 * the cluster's allow-list (or with a codec), both fixed when the cluster is built; a job runs
 * on a cluster it is given, so its results travel as {@code byte[]}, and each encodes and decodes itself
 * with this frame ({@link MetaBlock}, sized exactly per record, writes its own).
 * Little-endian; a version int first; strings are UTF-8 with an int length.
 *
 * <p>Thread-safety: a writer or reader is used by one thread.
 */
final class TaskFrame {
    /** Frame version written in the first int. */
    static final int VERSION = 1;

    private TaskFrame() {
    }

    /** Appends values to a growing frame. */
    static final class Writer {
        private ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);

        Writer() {
            b.putInt(VERSION);
        }

        Writer putInt(int v) {
            room(4).putInt(v);
            return this;
        }

        Writer putLong(long v) {
            room(8).putLong(v);
            return this;
        }

        Writer putString(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            room(4 + utf8.length).putInt(utf8.length).put(utf8);
            return this;
        }

        byte[] toBytes() {
            return Arrays.copyOf(b.array(), b.position());
        }

        private ByteBuffer room(int n) {
            if (b.remaining() < n) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(2 * b.capacity(), b.position() + n))
                        .order(ByteOrder.LITTLE_ENDIAN);
                b = bigger.put(b.flip());
            }
            return b;
        }
    }

    /** Reads values back in the order they were put; a short or foreign frame is an IllegalStateException. */
    static final class Reader {
        private final ByteBuffer b;
        private final String what;

        Reader(byte[] frame, String what) {
            this.b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
            this.what = what;
            int version = getInt();
            if (version != VERSION) {
                throw new IllegalStateException(what + " frame version " + version + ", expected " + VERSION);
            }
        }

        int getInt() {
            try {
                return b.getInt();
            } catch (BufferUnderflowException e) {
                throw endsEarly(e);
            }
        }

        long getLong() {
            try {
                return b.getLong();
            } catch (BufferUnderflowException e) {
                throw endsEarly(e);
            }
        }

        String getString() {
            int n = getInt();
            if (n < 0 || n > b.remaining()) {
                throw endsEarly(null);
            }
            String s = new String(b.array(), b.position(), n, StandardCharsets.UTF_8);
            b.position(b.position() + n);
            return s;
        }

        private IllegalStateException endsEarly(Throwable cause) {
            return new IllegalStateException(what + " frame of " + b.capacity() + " bytes ends early", cause);
        }
    }
}
