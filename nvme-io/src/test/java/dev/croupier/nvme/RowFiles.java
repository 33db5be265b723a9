package dev.croupier.nvme;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Test files whose rows encode their own index: the first min(8, rowSize) bytes hold the index
 * little-endian, every further byte is a function of the index and the byte's position, so a
 * row can be decoded and then checked byte for byte.
 */
final class RowFiles {

    private RowFiles() {}

    static Path write(Path file, int rowSize, long rowCount) throws IOException {
        if (rowSize < 8 && rowCount > 1L << (8 * rowSize)) {
            throw new IllegalArgumentException(rowCount + " rows cannot encode their index in " + rowSize + " bytes");
        }
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buffer = ByteBuffer.allocate(Math.max(rowSize, 1 << 20));
            for (long row = 0; row < rowCount; row++) {
                if (buffer.remaining() < rowSize) {
                    drain(out, buffer);
                }
                for (int k = 0; k < rowSize; k++) {
                    buffer.put(expectedByte(row, k));
                }
            }
            drain(out, buffer);
        }
        return file;
    }

    private static void drain(FileChannel out, ByteBuffer buffer) throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
        buffer.clear();
    }

    static byte expectedByte(long row, int position) {
        return position < 8 ? (byte) (row >>> (8 * position)) : (byte) (row * 131 + position * 7L);
    }

    /** The index a row claims to be. */
    static long decode(MemorySegment row) {
        long index = 0;
        int n = (int) Math.min(8, row.byteSize());
        for (int k = 0; k < n; k++) {
            index |= (row.get(ValueLayout.JAVA_BYTE, k) & 0xFFL) << (8 * k);
        }
        return index;
    }

    /** Decodes the row and checks every byte; returns its index. */
    static long checkedIndex(MemorySegment row, long rowCount) {
        long index = decode(row);
        if (index < 0 || index >= rowCount) {
            throw new AssertionError("row decodes to index " + index + ", outside [0, " + rowCount + ")");
        }
        for (int k = 0; k < row.byteSize(); k++) {
            byte actual = row.get(ValueLayout.JAVA_BYTE, k);
            if (actual != expectedByte(index, k)) {
                throw new AssertionError("row " + index + " byte " + k + " is " + actual + ", file has "
                        + expectedByte(index, k));
            }
        }
        return index;
    }

    static boolean isTmpfs(Path dir) throws IOException {
        String type = Files.getFileStore(dir).type();
        return "tmpfs".equals(type) || "ramfs".equals(type);
    }

    /**
     * Skips the calling test unless native AIO can work in {@code dir}: O_DIRECT needs a
     * disk-backed folder, on Linux x86-64 or aarch64, where the kernel grants a context (a
     * sandbox may forbid io_setup).
     */
    static void assumeAio(Path dir) throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(LinuxAio.AVAILABLE && !isTmpfs(dir),
                "needs native AIO and a disk-backed temp dir");
        long ctx;
        try {
            ctx = LinuxAio.setup(1);
        } catch (IOException e) {
            org.junit.jupiter.api.Assumptions.abort("the kernel refused an AIO context: " + e.getMessage());
            return;
        }
        LinuxAio.destroy(ctx);
    }
}
