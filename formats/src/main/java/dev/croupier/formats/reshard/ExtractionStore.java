package dev.croupier.formats.reshard;

import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.reshard.internal.ShardExtraction;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Design note: the bytes of one input shard's extracted records. Files are appended to heap
 * slabs of {@link #SLAB} bytes while a job-wide memory budget allows, and to a spill file in the
 * work folder once it does not (dSort's "extract to disk" mode, decided per file rather than
 * per shard). The file table is columnar (parallel arrays), so a record costs no objects beyond
 * its metadata; a record's files are contiguous in the table even when they were not adjacent
 * in the shard, because extraction registers them once the shard has been read. Loading a
 * record gives read-only views into slabs (no copy) or one read from the spill file. One
 * thread fills a store; after {@link #seal()} any number of threads may load from it. Files
 * over one slab go straight to the spill file.
 */
final class ExtractionStore implements ShardExtraction.Sink, AutoCloseable {
    /** Slab size for in-memory file bytes. */
    static final int SLAB = 4 << 20;
    private static final long SPILLED = 1L << 62;

    private final AtomicLong budget;
    private final Path workDir;
    private final boolean keepBytes;
    private final List<byte[]> slabs = new ArrayList<>();
    private int slabUsed = SLAB;
    private FileChannel spill;
    private Path spillPath;
    private long spillSize;
    private long memoryBytes;

    private String[] ext = new String[64];
    private long[] loc = new long[64];
    private int[] size = new int[64];
    private int files;
    private int[] recordFirst = new int[16];
    private int[] recordCount = new int[16];
    private int records;

    /**
     * @param budget job-wide bytes of memory still free for extracted files; shared by stores
     * @param workDir where the spill file goes
     * @param keepBytes false for a dry run: bytes are read and dropped
     */
    ExtractionStore(AtomicLong budget, Path workDir, boolean keepBytes) {
        this.budget = budget;
        this.workDir = workDir;
        this.keepBytes = keepBytes;
    }

    @Override
    public long put(InputStream in, long length) throws IOException {
        if (length > Integer.MAX_VALUE - 8) {
            throw new IOException("file of " + length + " bytes is larger than a record file may be (2 GiB)");
        }
        int n = (int) length;
        if (!keepBytes) {
            in.skipNBytes(n);
            return -1;
        }
        if (n <= SLAB && (slabUsed + n <= SLAB || reserveSlab())) {
            byte[] slab = slabs.getLast();
            in.readNBytes(slab, slabUsed, n);
            long l = ((long) (slabs.size() - 1) << 32) | slabUsed;
            slabUsed += n;
            return l;
        }
        return spill(in, n);
    }

    private boolean reserveSlab() {
        if (budget.addAndGet(-SLAB) < 0) {
            budget.addAndGet(SLAB);
            return false;
        }
        slabs.add(new byte[SLAB]);
        memoryBytes += SLAB;
        slabUsed = 0;
        return true;
    }

    private long spill(InputStream in, int n) throws IOException {
        if (spill == null) {
            spillPath = Files.createTempFile(workDir, "extract-", ".spill");
            spill = FileChannel.open(spillPath, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        long at = spillSize;
        byte[] chunk = new byte[Math.min(n, 1 << 16)];
        long pos = at;
        int left = n;
        while (left > 0) {
            int k = in.readNBytes(chunk, 0, Math.min(chunk.length, left));
            if (k == 0) {
                throw new IOException("stream ended before the file's " + n + " bytes");
            }
            ByteBuffer b = ByteBuffer.wrap(chunk, 0, k);
            while (b.hasRemaining()) {
                pos += spill.write(b, pos);
            }
            left -= k;
        }
        spillSize = pos;
        return SPILLED | at;
    }

    @Override
    public long put(ByteBuffer content) throws IOException {
        byte[] b = new byte[content.remaining()];
        content.duplicate().get(b);
        return put(new java.io.ByteArrayInputStream(b), b.length);
    }

    @Override
    public long addRecord(List<String> extensions, long[] locations, int[] sizes) {
        if (records == recordFirst.length) {
            recordFirst = Arrays.copyOf(recordFirst, records * 2);
            recordCount = Arrays.copyOf(recordCount, records * 2);
        }
        recordFirst[records] = files;
        recordCount[records] = extensions.size();
        for (int i = 0; i < extensions.size(); i++) {
            if (files == ext.length) {
                ext = Arrays.copyOf(ext, files * 2);
                loc = Arrays.copyOf(loc, files * 2);
                size = Arrays.copyOf(size, files * 2);
            }
            ext[files] = extensions.get(i);
            loc[files] = locations[i];
            size[files] = sizes[i];
            files++;
        }
        return records++;
    }

    /** Ends filling; the last slab's unused tail is not returned to the budget (it stays allocated). */
    void seal() throws IOException {
        if (spill != null) {
            spill.force(false);
        }
    }

    Record load(String key, long handle) throws IOException {
        int r = (int) handle;
        int first = recordFirst[r];
        List<RecordFile> out = new ArrayList<>(recordCount[r]);
        for (int f = first; f < first + recordCount[r]; f++) {
            out.add(new RecordFile(ext[f], bytes(f)));
        }
        return new Record(key, out);
    }

    private ByteBuffer bytes(int f) throws IOException {
        long l = loc[f];
        if (l == -1) {
            throw new IllegalStateException("dry-run store holds no bytes");
        }
        if ((l & SPILLED) == 0) {
            return ByteBuffer.wrap(slabs.get((int) (l >>> 32)), (int) l, size[f]).slice();
        }
        ByteBuffer b = ByteBuffer.allocate(size[f]);
        long pos = l & ~SPILLED;
        while (b.hasRemaining()) {
            int k = spill.read(b, pos);
            if (k < 0) {
                throw new IOException("spill file " + spillPath + " ends early");
            }
            pos += k;
        }
        return b.flip();
    }

    /** @return bytes held in memory slabs */
    long memoryBytes() {
        return memoryBytes;
    }

    /** @return bytes written to the spill file */
    long spilledBytes() {
        return spillSize;
    }

    /** Frees the slabs (returning them to the budget) and deletes the spill file. */
    @Override
    public void close() throws IOException {
        budget.addAndGet(memoryBytes);
        memoryBytes = 0;
        slabs.clear();
        if (spill != null) {
            try {
                spill.close();
            } finally {
                Files.deleteIfExists(spillPath);
                spill = null;
            }
        }
    }
}
