package dev.croupier.formats;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Design note: small stream adapters shared by the readers. {@link Counted} tracks how many
 * bytes a decoder consumed, which is the offset we report in errors; {@link Bounded} exposes one
 * member of an archive as its own stream that cannot read past the member nor close the shard.
 */
final class ArchiveStreams {
    private ArchiveStreams() {
    }

    /**
     * Counts bytes read through it and, while tapping, keeps the last 512 bytes read, which is
     * how the tar reader gets at the header block Commons Compress just parsed.
     */
    static final class Counted extends FilterInputStream {
        long count;
        private final byte[] ring = new byte[512];
        private int ringEnd;
        private boolean tapping;

        void tap(boolean on) {
            tapping = on;
        }

        /** @return the last 512 bytes read while tapping, oldest first */
        byte[] lastBlock() {
            byte[] out = new byte[ring.length];
            int tail = ring.length - ringEnd;
            System.arraycopy(ring, ringEnd, out, 0, tail);
            System.arraycopy(ring, 0, out, tail, ringEnd);
            return out;
        }

        private void record(byte[] b, int off, int n) {
            if (n >= ring.length) {
                System.arraycopy(b, off + n - ring.length, ring, 0, ring.length);
                ringEnd = 0;
                return;
            }
            int first = Math.min(n, ring.length - ringEnd);
            System.arraycopy(b, off, ring, ringEnd, first);
            System.arraycopy(b, off + first, ring, 0, n - first);
            ringEnd = (ringEnd + n) % ring.length;
        }

        Counted(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                count++;
                if (tapping) {
                    record(new byte[] {(byte) b}, 0, 1);
                }
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                count += n;
                if (tapping) {
                    record(b, off, n);
                }
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long s = in.skip(n);
            count += s;
            return s;
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }

    /** Reads up to a fixed number of bytes from a shared stream; close does not close the shard. */
    abstract static class Bounded extends InputStream {
        long left;

        Bounded(long size) {
            this.left = size;
        }

        /** Reads from the underlying source, never more than asked. */
        abstract int readSource(byte[] b, int off, int len) throws IOException;

        /** Called once when the member's last byte has been read (checksum checks go here). */
        void atEnd() throws IOException {
        }

        private boolean endSeen;

        @Override
        public final int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public final int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (left == 0) {
                if (!endSeen) {
                    endSeen = true;
                    atEnd();
                }
                return -1;
            }
            int n = readSource(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw truncated();
            }
            left -= n;
            if (left == 0 && !endSeen) {
                endSeen = true;
                atEnd();
            }
            return n;
        }

        /** @return the error for a source that ends before the member does */
        abstract IOException truncated();

        /** Reads whatever is left of the member (verifying checksums on the way). */
        final void drain() throws IOException {
            byte[] sink = new byte[8192];
            while (read(sink, 0, sink.length) >= 0) {
                // Reading through is how the end-of-member checks run.
            }
        }

        @Override
        public final void close() {
            // The member's bytes belong to the shard stream; the reader closes that.
        }
    }
}
