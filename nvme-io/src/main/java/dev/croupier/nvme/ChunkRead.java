package dev.croupier.nvme;

import java.lang.foreign.MemorySegment;

/**
 * One chunk read, as both read engines issue it: the sector-aligned span of the file that holds
 * the chunk's rows, where the bytes land, and the scatter of the rows into their slots.
 *
 * <p>A whole aligned row that is a chunk of its own (4 KiB or 64 KiB rows read one per I/O) is
 * read straight into its slot; otherwise the span goes into the reader's aligned buffer and
 * {@link #scatter} copies each row to slot {@code (i * stride + offset) mod rows} of the fill.
 * Reused for every read of one reader thread or AIO slot; not thread-safe.
 */
final class ChunkRead {
    private final int rowSize;
    private final long rowCount;
    private final SamplerLayout layout;

    Workspace.Fill fill;
    long firstRow;
    int rows;
    /** File offsets of the chunk's rows, {@code [start, end)}. */
    long start;
    long end;
    /** The aligned span read: {@code readLength} bytes from {@code readStart}. */
    long readStart;
    int readLength;
    /** Bytes from {@code readStart} that must arrive: up to {@code end}, which may precede the aligned end. */
    int needed;
    /** Workspace byte offset of the first row's slot. */
    private long slotOffset;
    private long slot;
    boolean intoSlot;

    ChunkRead(int rowSize, long rowCount, SamplerLayout layout) {
        this.rowSize = rowSize;
        this.rowCount = rowCount;
        this.layout = layout;
    }

    /** Plans the read of entry {@code planIndex} of {@code fill}'s plan. */
    void plan(Workspace.Fill fill, int planIndex) {
        this.fill = fill;
        Workspace workspace = fill.workspace;
        long chunk = workspace.chunks[planIndex];
        firstRow = chunk * layout.rowsPerChunk();
        rows = (int) Math.min(layout.rowsPerChunk(), rowCount - firstRow);
        start = firstRow * rowSize;
        end = start + (long) rows * rowSize;
        int alignment = layout.ioAlignment();
        readStart = SamplerLayout.alignDown(start, alignment);
        readLength = (int) (SamplerLayout.alignUp(end, alignment) - readStart);
        needed = (int) (end - readStart);
        slot = fill.slot(workspace.firstOrdinals[planIndex]);
        slotOffset = (long) layout.prefixRows() * rowSize + slot * rowSize;
        intoSlot = rows == 1 && readLength == rowSize && (workspace.memory.address() + slotOffset) % alignment == 0;
    }

    /** Where the read's bytes go: the row's own slot, or the first {@code readLength} bytes of {@code ioBuffer}. */
    MemorySegment target(MemorySegment ioBuffer) {
        return intoSlot ? fill.workspace.memory.asSlice(slotOffset, rowSize) : ioBuffer.asSlice(0, readLength);
    }

    /** The address {@link #target} starts at, without making a slice (the AIO engine's per-read path). */
    long targetAddress(MemorySegment ioBuffer) {
        return intoSlot ? fill.workspace.memory.address() + slotOffset : ioBuffer.address();
    }

    /** Copies the rows from {@code ioBuffer} into their scattered slots; nothing when read in place. */
    void scatter(MemorySegment ioBuffer) {
        if (intoSlot) {
            return;
        }
        MemorySegment memory = fill.workspace.memory;
        long prefixBytes = (long) layout.prefixRows() * rowSize;
        long source = start - readStart;
        long s = slot;
        for (int k = 0; k < rows; k++) {
            MemorySegment.copy(ioBuffer, source, memory, prefixBytes + s * rowSize, rowSize);
            source += rowSize;
            s += fill.stride;
            if (s >= fill.rows) {
                s -= fill.rows;
            }
        }
    }

    /** The rows and bytes of this read, for error messages. */
    String describe() {
        return "rows " + firstRow + ".." + (firstRow + rows - 1) + " (bytes " + start + ".." + end + ")";
    }
}
