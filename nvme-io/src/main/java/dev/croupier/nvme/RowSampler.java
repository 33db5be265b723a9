package dev.croupier.nvme;

import com.sun.nio.file.ExtendedOpenOption;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Samples random fixed-size rows from a file far larger than memory, with direct I/O and many
 * reads in flight, without filling the page cache.
 *
 * <pre>{@code
 * try (RowSampler sampler = RowSampler.builder(Path.of("train.bin"))
 *         .rowSize(512).maxBatchRows(4096).memoryLimit(256L << 20).build()) {
 *     RowBatch batch = sampler.readBatch(1024);   // 1024 rows, one contiguous off-heap segment
 *     train(batch.segment());
 * }
 * }</pre>
 *
 * <p>How it works: the file is cut into chunks of {@link Builder#chunkBytes} bytes' worth of
 * consecutive rows. Whole chunks are read (sector-aligned, {@code O_DIRECT}) into aligned
 * buffers, {@link Builder#readerThreads} at a time, by Linux native AIO from a few threads or by
 * as many blocking reader threads ({@link IoEngine}), and their rows are scattered across a
 * workspace, so rows that are neighbours in the file end up far apart. Two workspaces are filled in turn: the consumer takes batches from one
 * while the readers fill the other. With replacement, chunks are drawn independently and
 * uniformly, so every row is equally likely; rows within one drawn chunk arrive together
 * (scattered across the workspace), and a chunk size at or below the row size makes rows fully
 * independent. Without replacement, each epoch visits every chunk once in a seeded random order
 * and every row exactly once: rows {@code [e * rowCount, (e + 1) * rowCount)} of the stream of
 * returned rows are epoch {@code e}. The same seed gives the same stream.
 *
 * <p>On file systems without {@code O_DIRECT} (tmpfs) it falls back to buffered reads, logs that
 * once, and drops what it read from the page cache with {@code posix_fadvise(DONTNEED)}: each
 * read's pages after it, and the whole file's once more at close.
 *
 * <p>Thread-safety: one consumer thread at a time may call {@link #readBatch} and
 * {@link #close}; the reading threads are internal. {@link #stats()} may be called from any
 * thread.
 */
public final class RowSampler implements AutoCloseable {

    /** Default maximum rows per batch, as in the reference NVMe sampler. */
    public static final int DEFAULT_MAX_BATCH_ROWS = 8192;
    /** Default memory limit: 256 MiB for both workspaces and all read buffers. */
    public static final long DEFAULT_MEMORY_LIMIT = 256L << 20;
    /** Default reader threads, which is also the number of reads in flight. */
    public static final int DEFAULT_READER_THREADS = 16;
    /** Default bytes of consecutive rows per read: 64 KiB, where SSD bandwidth saturates. */
    public static final int DEFAULT_CHUNK_BYTES = 64 << 10;
    /** Default seed of the random row order. */
    public static final long DEFAULT_SEED = 0x5EED_C0DEL;
    /** Largest row size: 1 GiB. */
    public static final int MAX_ROW_SIZE = 1 << 30;
    /** Most reader threads. */
    public static final int MAX_READER_THREADS = 1024;
    /** Largest chunk: 64 MiB. */
    public static final int MAX_CHUNK_BYTES = 64 << 20;
    /** Alignment used when the file store does not report a block size. */
    static final int FALLBACK_ALIGNMENT = 4096;

    private static final System.Logger LOG = System.getLogger(RowSampler.class.getName());

    private final Path file;
    private final int rowSize;
    private final long rowCount;
    private final int maxBatchRows;
    private final long memoryLimit;
    private final boolean withReplacement;
    private final long seed;
    private final boolean directIo;
    private final SamplerLayout layout;
    private final FileChannel channel;
    private final int adviceFd;
    private final Arena arena;
    private final long allocatedBytes;
    private final ReadEngine readers;
    /** The {@code O_DIRECT} descriptor the AIO engine reads through, or -1. */
    private final int aioFd;
    private final Workspace[] workspaces = new Workspace[2];

    // Consumer-thread state.
    private final SplittableRandom chunkDraws;
    private final SplittableRandom scatterDraws;
    /** With replacement: a drawn chunk that did not fit the last fill, or -1. */
    private long carriedChunk = -1;
    /** Without replacement: the current epoch, its order, and the next position in it. */
    private long epoch = -1;
    private ChunkPermutation epochOrder;
    private long epochPosition;
    private int current;
    private boolean primed;
    /** Row offsets, from the start of the current workspace's memory, of the unread rows. */
    private long cursor;
    private long end;
    private long rowsReturned;
    private RuntimeException failure;
    private boolean closed;

    private RowSampler(Builder b, long rowCount, boolean directIo, int alignment, FileChannel channel)
            throws IOException {
        this.file = b.file;
        this.rowSize = b.rowSize;
        this.rowCount = rowCount;
        this.maxBatchRows = b.maxBatchRows;
        this.memoryLimit = b.memoryLimit;
        this.withReplacement = b.withReplacement;
        this.seed = b.seed;
        this.directIo = directIo;
        this.channel = channel;
        // AIO keeps two buffers per read in flight (see AioReaders); threads one each.
        boolean tryAio = directIo && b.usesAio() && LinuxAio.AVAILABLE;
        this.layout = SamplerLayout.compute(rowSize, rowCount, maxBatchRows, memoryLimit, b.readBuffers(tryAio),
                b.chunkBytes, alignment);
        this.chunkDraws = new SplittableRandom(seed);
        this.scatterDraws = new SplittableRandom(ChunkPermutation.mix(seed ^ 0x5CA77E5L));
        int fd = -1;
        Arena memory = Arena.ofShared();
        try {
            if (!directIo && Libc.AVAILABLE) {
                fd = Libc.openReadOnly(file);
                int rc = Libc.adviseRandom(fd);
                if (rc != 0) {
                    throw new IOException(file + ": posix_fadvise(RANDOM) failed with error " + rc);
                }
            }
            long allocated = 0;
            MemorySegment[] ioBuffers = new MemorySegment[b.readBuffers(tryAio)];
            for (int i = 0; i < ioBuffers.length; i++) {
                ioBuffers[i] = memory.allocate(layout.maxReadBytes(), alignment);
                allocated += layout.maxReadBytes() + alignment - 1;
            }
            for (int i = 0; i < workspaces.length; i++) {
                long bytes = layout.workspaceBytes(rowSize);
                // Anonymous huge-page memory where available: see Libc.mapAnonymous for why.
                MemorySegment rows = Libc.AVAILABLE ? Libc.mapAnonymous(bytes, memory)
                        : memory.allocate(bytes, SamplerLayout.WORKSPACE_ALIGNMENT);
                workspaces[i] = new Workspace(rows, layout.planChunks());
                allocated += bytes + SamplerLayout.WORKSPACE_SLACK
                        + (long) layout.planChunks() * (Long.BYTES + Integer.BYTES);
            }
            this.allocatedBytes = allocated;
            this.arena = memory;
            this.adviceFd = fd;
            int direct = -1;
            ReadEngine engine = null;
            if (directIo && b.usesAio()) {
                try {
                    if (!tryAio) {
                        throw new IOException("native AIO is not available on " + System.getProperty("os.name") + " "
                                + System.getProperty("os.arch"));
                    }
                    direct = Libc.openDirect(file);
                    engine = new AioReaders(file, direct, rowSize, rowCount, layout, ioBuffers);
                } catch (IOException e) {
                    if (direct >= 0) {
                        Libc.close(direct);
                        direct = -1;
                    }
                    if (b.ioEngine == IoEngine.AIO) {
                        throw new IOException(file + ": ioEngine = AIO, but " + e.getMessage(), e);
                    }
                    LOG.log(System.Logger.Level.INFO, "nvme-io: " + file + ": " + e.getMessage()
                            + "; reading with " + b.readerThreads + " threads instead");
                }
            } else if (b.ioEngine == IoEngine.AIO) {
                throw new IllegalArgumentException("ioEngine = AIO needs O_DIRECT, which " + file + " does not get"
                        + " (buffered fallback); use AUTO or THREADS");
            }
            this.aioFd = direct;
            this.readers = engine != null ? engine : new ChunkReaders(file, channel, fd, rowSize, rowCount, layout,
                    Arrays.copyOf(ioBuffers, b.readerThreads));
        } catch (IOException | RuntimeException | Error e) {
            memory.close();
            if (fd >= 0) {
                Libc.close(fd);
            }
            throw e;
        }
        refill(workspaces[0]);
        refill(workspaces[1]);
    }

    /** Starts a builder for a sampler over {@code file}. */
    public static Builder builder(Path file) {
        return new Builder(Objects.requireNonNull(file, "file"));
    }

    /**
     * Returns the next {@code rows} sampled rows, contiguous in one off-heap segment. Blocks
     * while the readers are behind. The batch is valid until the next call.
     *
     * @throws IllegalArgumentException if {@code rows} is not in {@code [1, maxBatchRows]}
     * @throws UncheckedIOException if a read failed; the message names the file and offset
     * @throws IllegalStateException if the sampler is closed
     */
    public RowBatch readBatch(int rows) {
        if (closed) {
            throw new IllegalStateException(file + ": sampler is closed");
        }
        if (failure != null) {
            throw failure;
        }
        if (rows < 1 || rows > maxBatchRows) {
            throw new IllegalArgumentException("batch of " + rows + " rows is outside [1, maxBatchRows = "
                    + maxBatchRows + "] for " + file);
        }
        if (!primed) {
            Workspace first = workspaces[current];
            awaitFill(first);
            cursor = layout.prefixRows();
            end = cursor + first.fill.rows;
            primed = true;
        }
        while (end - cursor < rows) {
            flip();
        }
        MemorySegment batch = workspaces[current].memory.asSlice(cursor * rowSize, (long) rows * rowSize).asReadOnly();
        cursor += rows;
        rowsReturned += rows;
        return new RowBatch(batch, rows, rowSize);
    }

    /**
     * Moves to the other workspace: waits for its fill, copies the unread tail of this one in
     * front of its body so the next batch stays contiguous, and sends this one to be refilled.
     */
    private void flip() {
        Workspace from = workspaces[current];
        Workspace to = workspaces[1 - current];
        awaitFill(to);
        long tail = end - cursor;
        long newCursor = layout.prefixRows() - tail;
        MemorySegment.copy(from.memory, cursor * rowSize, to.memory, newCursor * rowSize, tail * rowSize);
        refill(from);
        current = 1 - current;
        cursor = newCursor;
        end = layout.prefixRows() + to.fill.rows;
    }

    private void awaitFill(Workspace workspace) {
        try {
            workspace.fill.done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new InterruptedIOException(file + ": interrupted while waiting for rows"));
        }
        Throwable t = workspace.fill.failure;
        if (t != null) {
            failure = t instanceof IOException io ? new UncheckedIOException(file + ": read failed: " + io.getMessage(), io)
                    : t instanceof UncheckedIOException u ? u
                    : new IllegalStateException(file + ": reader failed", t);
            throw failure;
        }
    }

    /** Plans the next fill of {@code workspace} (consumer thread) and hands it to the readers. */
    private void refill(Workspace workspace) {
        int chunks = 0;
        int rows = 0;
        if (!withReplacement && epochPosition == layout.chunkCount()) {
            epochPosition = 0;
            epoch++;
            epochOrder = null;
        }
        if (!withReplacement && epochOrder == null) {
            epochOrder = new ChunkPermutation(layout.chunkCount(), ChunkPermutation.mix(seed + epoch));
        }
        while (chunks < layout.planChunks()) {
            long chunk;
            if (withReplacement) {
                chunk = carriedChunk >= 0 ? carriedChunk : chunkDraws.nextLong(layout.chunkCount());
            } else if (epochPosition < layout.chunkCount()) {
                // A fill never crosses an epoch, so the scatter never mixes two epochs.
                chunk = epochOrder.apply(epochPosition);
            } else {
                break;
            }
            int chunkRows = (int) Math.min(layout.rowsPerChunk(), rowCount - chunk * layout.rowsPerChunk());
            if (rows + chunkRows > layout.workspaceRows()) {
                carriedChunk = withReplacement ? chunk : -1;
                break;
            }
            carriedChunk = -1;
            workspace.chunks[chunks] = chunk;
            workspace.firstOrdinals[chunks] = rows;
            chunks++;
            rows += chunkRows;
            if (!withReplacement) {
                epochPosition++;
            }
        }
        Workspace.Fill fill = new Workspace.Fill(workspace, chunks, rows, Workspace.stride(rows),
                scatterDraws.nextLong(rows));
        workspace.fill = fill;
        readers.submit(fill);
    }

    /** The file being sampled. */
    public Path file() {
        return file;
    }

    /** Bytes per row. */
    public int rowSize() {
        return rowSize;
    }

    /** Rows in the file (or the prefix of it being sampled). */
    public long rowCount() {
        return rowCount;
    }

    /** Largest batch {@link #readBatch} accepts. */
    public int maxBatchRows() {
        return maxBatchRows;
    }

    /** Rows read by one I/O: {@code max(1, chunkBytes / rowSize)}, at most the row count. */
    public int rowsPerChunk() {
        return layout.rowsPerChunk();
    }

    /** Rows in each of the two workspaces (not counting the batch prefix). */
    public int workspaceRows() {
        return layout.workspaceRows();
    }

    /** True when reads bypass the page cache with {@code O_DIRECT}; false in the buffered fallback. */
    public boolean directIo() {
        return directIo;
    }

    /** The engine that keeps the reads in flight: {@link IoEngine#AIO} or {@link IoEngine#THREADS}. */
    public IoEngine ioEngine() {
        return readers.engine();
    }

    /** Off-heap and plan bytes this sampler allocated, alignment slack included; never above the memory limit. */
    public long allocatedBytes() {
        return allocatedBytes;
    }

    /** The memory limit it was built with. */
    public long memoryLimit() {
        return memoryLimit;
    }

    /** A snapshot of the counters: rows returned (consumer's view), bytes read and reads issued. */
    public Stats stats() {
        return new Stats(rowsReturned, readers.bytesRead(), readers.reads());
    }

    /**
     * Counters of a sampler.
     *
     * @param rowsReturned rows handed out by {@code readBatch}
     * @param bytesRead bytes read from the file, alignment padding included
     * @param reads reads issued (one per chunk)
     */
    public record Stats(long rowsReturned, long bytesRead, long reads) {}

    /** Stops the readers, then frees the workspaces and closes the file. Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            readers.close();
            if (adviceFd >= 0) {
                // Each read's DONTNEED is best effort: the kernel skips a page that is locked, or
                // held by another reader, or off its LRU list for a moment (one 4 KiB page was left
                // once in RowSamplerTest). With every reader stopped, one more pass over the file
                // drops what those skipped.
                int rc = Libc.dropFromPageCache(adviceFd, 0, 0);
                if (rc != 0) {
                    throw new IOException(file + ": posix_fadvise(DONTNEED) at close failed with error " + rc);
                }
            }
        } finally {
            arena.close();
            if (adviceFd >= 0) {
                Libc.close(adviceFd);
            }
            if (aioFd >= 0) {
                Libc.close(aioFd);
            }
            channel.close();
        }
    }

    /**
     * Collects and checks a sampler's settings; {@link #build()} validates every knob and
     * names the one that is wrong. Not thread-safe.
     */
    public static final class Builder {
        private final Path file;
        private int rowSize;
        private long rowCount = -1;
        private int maxBatchRows = DEFAULT_MAX_BATCH_ROWS;
        private long memoryLimit = DEFAULT_MEMORY_LIMIT;
        private int readerThreads = DEFAULT_READER_THREADS;
        private int chunkBytes = DEFAULT_CHUNK_BYTES;
        private long seed = DEFAULT_SEED;
        private boolean withReplacement = true;
        private boolean bufferedReads;
        private IoEngine ioEngine = IoEngine.AUTO;

        private Builder(Path file) {
            this.file = file;
        }

        /** Bytes per row, in {@code [1, MAX_ROW_SIZE]}; required. */
        public Builder rowSize(int bytes) {
            this.rowSize = bytes;
            return this;
        }

        /**
         * Rows to sample from the start of the file, in {@code [1, fileSize / rowSize]}; by
         * default derived from the file size, which must then be a multiple of the row size.
         */
        public Builder rowCount(long rows) {
            this.rowCount = rows;
            return this;
        }

        /** Largest batch {@code readBatch} will be asked for, in {@code [1, 2^31 / rowSize)}. */
        public Builder maxBatchRows(int rows) {
            this.maxBatchRows = rows;
            return this;
        }

        /** Bytes the sampler may allocate in all: two workspaces, their plans and the read buffers. */
        public Builder memoryLimit(long bytes) {
            this.memoryLimit = bytes;
            return this;
        }

        /**
         * Reads in flight, in {@code [1, MAX_READER_THREADS]}: the number of reader threads of
         * {@link IoEngine#THREADS}, the queue depth of {@link IoEngine#AIO}.
         */
        public Builder readerThreads(int threads) {
            this.readerThreads = threads;
            return this;
        }

        /** How reads are kept in flight (default {@link IoEngine#AUTO}: native AIO where it works). */
        public Builder ioEngine(IoEngine engine) {
            this.ioEngine = Objects.requireNonNull(engine, "ioEngine");
            return this;
        }

        /**
         * Bytes of consecutive rows read at once, in {@code [1, MAX_CHUNK_BYTES]}; a chunk holds
         * {@code max(1, chunkBytes / rowSize)} rows. Bigger chunks read faster, smaller ones give
         * more independent rows.
         */
        public Builder chunkBytes(int bytes) {
            this.chunkBytes = bytes;
            return this;
        }

        /** Seed of the random order; any value. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** True (default): independent draws. False: epochs that visit every row exactly once. */
        public Builder withReplacement(boolean withReplacement) {
            this.withReplacement = withReplacement;
            return this;
        }

        /**
         * Reads buffered (then drops the pages) even where {@code O_DIRECT} works, so tests can
         * drive the fallback on a disk-backed file system, where page-cache residency is visible.
         */
        Builder bufferedReads() {
            this.bufferedReads = true;
            return this;
        }

        /** Read buffers to allocate: two per read in flight where native AIO may be used, else one. */
        private int readBuffers(boolean aio) {
            return aio ? 2 * readerThreads : readerThreads;
        }

        /** Whether AIO is wanted, given {@code O_DIRECT}: unless threads were asked for. */
        private boolean usesAio() {
            return ioEngine != IoEngine.THREADS;
        }

        /**
         * Checks every knob, opens the file and starts the readers.
         *
         * @throws IllegalArgumentException naming the knob and value when one is out of range,
         *     the file size is not a multiple of the row size, or the memory limit is too small
         * @throws IOException if the file cannot be opened
         */
        public RowSampler build() throws IOException {
            if (rowSize < 1 || rowSize > MAX_ROW_SIZE) {
                throw new IllegalArgumentException("rowSize = " + rowSize + " bytes; must be in [1, " + MAX_ROW_SIZE + "]");
            }
            long maxBatchLimit = (Integer.MAX_VALUE - 1) / rowSize;
            if (maxBatchRows < 1 || maxBatchRows > maxBatchLimit) {
                throw new IllegalArgumentException("maxBatchRows = " + maxBatchRows + "; must be in [1, " + maxBatchLimit
                        + "] so a batch of " + rowSize + "-byte rows fits one ByteBuffer");
            }
            if (memoryLimit < 1) {
                throw new IllegalArgumentException("memoryLimit = " + memoryLimit + " bytes; must be positive");
            }
            if (readerThreads < 1 || readerThreads > MAX_READER_THREADS) {
                throw new IllegalArgumentException("readerThreads = " + readerThreads + "; must be in [1, "
                        + MAX_READER_THREADS + "]");
            }
            if (chunkBytes < 1 || chunkBytes > MAX_CHUNK_BYTES) {
                throw new IllegalArgumentException("chunkBytes = " + chunkBytes + "; must be in [1, " + MAX_CHUNK_BYTES + "]");
            }
            if (rowCount == 0 || rowCount < -1) {
                throw new IllegalArgumentException("rowCount = " + rowCount + "; must be at least 1");
            }
            if (!Files.isRegularFile(file)) {
                throw new NoSuchFileException(file.toString(), null, "not a regular file");
            }
            long size = Files.size(file);
            long rows = rowCount;
            if (rows == -1) {
                if (size % rowSize != 0) {
                    throw new IllegalArgumentException(file + ": file size " + size + " bytes is not a multiple of rowSize = "
                            + rowSize + " bytes (" + size / rowSize + " rows and " + size % rowSize
                            + " bytes left over); set rowCount to sample a prefix");
                }
                rows = size / rowSize;
                if (rows == 0) {
                    throw new IllegalArgumentException(file + ": file is empty; no rows to sample");
                }
            } else if (rows > size / rowSize) {
                throw new IllegalArgumentException("rowCount = " + rows + " rows of " + rowSize + " bytes is more than "
                        + file + " holds (" + size + " bytes = " + size / rowSize + " rows)");
            }
            // Sizing fails before any file handle or memory is taken.
            SamplerLayout.compute(rowSize, rows, maxBatchRows, memoryLimit, readBuffers(usesAio()),
                    chunkBytes, FALLBACK_ALIGNMENT);
            return open(rows);
        }

        private RowSampler open(long rows) throws IOException {
            FileStore store = Files.getFileStore(file);
            int alignment = blockSize(store);
            String fsType = store.type();
            FileChannel channel = null;
            String whyBuffered;
            if (bufferedReads) {
                whyBuffered = "buffered reads were asked for";
            } else if ("tmpfs".equals(fsType) || "ramfs".equals(fsType)) {
                // tmpfs may accept O_DIRECT (Linux 6.6+), but its pages are the storage itself.
                whyBuffered = fsType + " keeps files in the page cache";
            } else {
                try {
                    channel = FileChannel.open(file, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
                    whyBuffered = null;
                } catch (IOException | UnsupportedOperationException e) {
                    whyBuffered = fsType + " refused O_DIRECT: " + e.getMessage();
                }
            }
            if (channel == null) {
                LOG.log(System.Logger.Level.INFO, "nvme-io: " + file + ": " + whyBuffered
                        + "; using buffered reads and dropping the pages read with posix_fadvise(DONTNEED)");
                channel = FileChannel.open(file, StandardOpenOption.READ);
            }
            try {
                return new RowSampler(this, rows, whyBuffered == null, alignment, channel);
            } catch (IOException | RuntimeException | Error e) {
                channel.close();
                throw e;
            }
        }

        private static int blockSize(FileStore store) {
            try {
                long size = store.getBlockSize();
                return size > 0 && size <= MAX_CHUNK_BYTES && Long.bitCount(size) == 1 ? (int) size : FALLBACK_ALIGNMENT;
            } catch (IOException | UnsupportedOperationException e) {
                return FALLBACK_ALIGNMENT;
            }
        }
    }
}
