package dev.croupier.nvme;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A batch of rows returned by {@link RowSampler#readBatch(int)}: {@code rowCount} rows of
 * {@code rowSize} bytes, back to back in one contiguous off-heap segment.
 *
 * <p>The segment is a read-only view into the sampler's workspace, not a copy: it stays valid
 * until the next {@code readBatch} call on the same sampler (after which the memory is reused)
 * and until the sampler is closed (after which any access throws
 * {@link IllegalStateException}). Copy it ({@link #toFloatArray()}, {@link MemorySegment#copy})
 * to keep it longer. Not thread-safe to share across that boundary; reading it from several
 * threads before the next {@code readBatch} is fine.
 */
public final class RowBatch {

    private static final ValueLayout.OfFloat FLOAT_LE =
            ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment rows;
    private final int rowCount;
    private final int rowSize;

    RowBatch(MemorySegment rows, int rowCount, int rowSize) {
        this.rows = rows;
        this.rowCount = rowCount;
        this.rowSize = rowSize;
    }

    /** All rows, contiguous and read-only: row {@code i} is at byte offset {@code i * rowSize()}. */
    public MemorySegment segment() {
        return rows;
    }

    /** Number of rows in this batch. */
    public int rowCount() {
        return rowCount;
    }

    /** Bytes per row. */
    public int rowSize() {
        return rowSize;
    }

    /** A read-only view of row {@code index}. */
    public MemorySegment row(int index) {
        if (index < 0 || index >= rowCount) {
            throw new IndexOutOfBoundsException("row index " + index + " outside [0, " + rowCount + ")");
        }
        return rows.asSlice((long) index * rowSize, rowSize);
    }

    /** A read-only little-endian {@link ByteBuffer} view of all rows (no copy). */
    public ByteBuffer asByteBuffer() {
        return rows.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A copy of all rows as little-endian 32-bit floats, {@code rowSize() / 4} per row, the
     * layout of a float32 tensor written by NumPy or PyTorch on x86 and ARM.
     *
     * @throws IllegalStateException if the row size is not a multiple of 4 bytes
     */
    public float[] toFloatArray() {
        if (rowSize % Float.BYTES != 0) {
            throw new IllegalStateException("rowSize = " + rowSize + " bytes is not a multiple of 4; rows are not float32 vectors");
        }
        return rows.toArray(FLOAT_LE);
    }
}
