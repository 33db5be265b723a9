package dev.croupier.nvme;

/**
 * How a sampler divides its memory limit: rows per chunk, the size of a read, and how many
 * rows each of the two workspaces holds.
 *
 * <p>Design note: the budget is spent on (a) one aligned I/O buffer per reader thread, big
 * enough for the widest sector-aligned read of one chunk, and (b) two workspaces, each a
 * prefix of {@code maxBatchRows} rows (where the unread tail of the previous workspace is
 * copied so a batch that crosses workspaces is still one contiguous segment) followed by the
 * body of {@code workspaceRows} rows, plus the workspace's fill plan (a chunk index and a
 * first-slot ordinal per chunk). The body is the largest that fits, capped at the row count
 * and at {@link #MAX_CHUNKS_PER_FILL} chunks, because a bigger workspace adds nothing but
 * memory and time to the first batch. Every allocation is counted with the
 * slack an aligned allocation may need, so the sum never exceeds the limit. Immutable.
 *
 * @param rowsPerChunk rows read by one I/O
 * @param chunkCount number of chunks in the file ({@code ceil(rowCount / rowsPerChunk)})
 * @param maxReadBytes widest aligned read of one chunk
 * @param prefixRows rows in each workspace's prefix ({@code maxBatchRows})
 * @param workspaceRows rows in each workspace's body
 * @param planChunks most chunks one workspace fill may hold
 * @param ioAlignment alignment of reads: offset, length and buffer address
 */
record SamplerLayout(int rowsPerChunk, long chunkCount, int maxReadBytes, int prefixRows,
                     int workspaceRows, int planChunks, int ioAlignment) {

    /**
     * Most chunks one workspace fill holds. Rows of a fill are scattered among this many
     * chunks' rows, enough that a batch draws nearly every row from a different chunk, and a
     * fill of 4 KiB reads still completes in a fraction of a second.
     */
    static final int MAX_CHUNKS_PER_FILL = 8192;

    /** Alignment of workspace memory where it is not mapped anonymously: a cache line. */
    static final int WORKSPACE_ALIGNMENT = 64;

    /**
     * Bytes a workspace may occupy beyond its rows: an anonymous mapping is rounded up to
     * whole base pages, which are at most 64 KiB on Linux (4 KiB on x86-64). Counting the
     * largest keeps the sum under the limit on every page size.
     */
    static final long WORKSPACE_SLACK = (64 << 10) - 1;

    /** Bytes per planned chunk: a {@code long} chunk index and an {@code int} first slot. */
    private static final int PLAN_BYTES_PER_CHUNK = Long.BYTES + Integer.BYTES;

    static SamplerLayout compute(int rowSize, long rowCount, int maxBatchRows, long memoryLimit,
                                 int readBuffers, int chunkBytes, int ioAlignment) {
        int rowsPerChunk = (int) Math.max(1, Math.min(rowCount, chunkBytes / rowSize));
        long chunkCount = ceilDiv(rowCount, rowsPerChunk);
        // A chunk's first row may start anywhere inside a sector unless rows are whole sectors.
        long lead = rowSize % ioAlignment == 0 ? 0 : ioAlignment - 1;
        long maxRead = alignUp(lead + (long) rowsPerChunk * rowSize, ioAlignment);
        if (maxRead > Integer.MAX_VALUE - ioAlignment) {
            throw new IllegalArgumentException("chunk of " + rowsPerChunk + " rows of " + rowSize
                    + " bytes needs reads of " + maxRead + " bytes; must be below 2 GiB");
        }
        long minRows = (long) maxBatchRows + rowsPerChunk;
        // More chunks per fill than MAX_CHUNKS_PER_FILL mixes no better but delays the first
        // batch: with one small row per read, a 256 MiB workspace would be millions of reads.
        long mixingCap = (long) MAX_CHUNKS_PER_FILL * rowsPerChunk;
        long cap = Math.max(minRows, Math.min(Math.min(rowCount, mixingCap), Integer.MAX_VALUE / 2));
        SamplerLayout smallest = of(rowSize, rowsPerChunk, chunkCount, (int) maxRead, maxBatchRows,
                (int) minRows, ioAlignment);
        long needed = smallest.allocatedBytes(rowSize, readBuffers);
        if (needed > memoryLimit) {
            throw new IllegalArgumentException("memoryLimit = " + memoryLimit + " bytes is too small for two"
                    + " workspaces of " + (maxBatchRows + minRows) + " rows of " + rowSize + " bytes each (a prefix"
                    + " of maxBatchRows = " + maxBatchRows + " rows and a body of one batch plus one chunk of "
                    + rowsPerChunk + " rows) and " + readBuffers + " read buffers of " + maxRead
                    + " bytes; needs at least " + needed + " bytes");
        }
        // Largest body that fits: allocatedBytes is monotone in workspaceRows.
        long lo = minRows;
        long hi = cap;
        while (lo < hi) {
            long mid = lo + (hi - lo + 1) / 2;
            SamplerLayout candidate = of(rowSize, rowsPerChunk, chunkCount, (int) maxRead, maxBatchRows,
                    (int) mid, ioAlignment);
            if (candidate.allocatedBytes(rowSize, readBuffers) <= memoryLimit) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return of(rowSize, rowsPerChunk, chunkCount, (int) maxRead, maxBatchRows, (int) lo, ioAlignment);
    }

    private static SamplerLayout of(int rowSize, int rowsPerChunk, long chunkCount, int maxRead,
                                    int prefixRows, int workspaceRows, int ioAlignment) {
        // Full chunks fill a workspace in workspaceRows / rowsPerChunk; the short last chunk may be
        // drawn more than once with replacement, so leave room for twice as many before stopping.
        int planChunks = (int) Math.min(workspaceRows, 2L * ceilDiv(workspaceRows, rowsPerChunk) + 2);
        return new SamplerLayout(rowsPerChunk, chunkCount, maxRead, prefixRows, workspaceRows, planChunks,
                ioAlignment);
    }

    long workspaceBytes(int rowSize) {
        return ((long) prefixRows + workspaceRows) * rowSize;
    }

    /** Everything the sampler allocates, including alignment slack. */
    long allocatedBytes(int rowSize, int readBuffers) {
        long io = (long) readBuffers * (maxReadBytes + ioAlignment - 1);
        long workspace = workspaceBytes(rowSize) + WORKSPACE_SLACK;
        long plan = (long) planChunks * PLAN_BYTES_PER_CHUNK;
        return io + 2 * (workspace + plan);
    }

    static long alignUp(long value, long alignment) {
        return ceilDiv(value, alignment) * alignment;
    }

    static long alignDown(long value, long alignment) {
        return value - value % alignment;
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
