package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32;

/**
 * Sort Benchmark records (gensort's binary layout) made and checked without gensort:
 *
 * <pre>
 *   0          10  12                              44        48                        96      100
 *   +-----------+---+-------------------------------+---------+-------------------------+-------+
 *   | key (10)  |00 | record index, 32 hex digits   |88 99 AA | filler: 48 ASCII letters| CC DD |
 *   | random    |11 | (ASCII)                       |BB       | from the index          | EE FF |
 *   +-----------+---+-------------------------------+---------+-------------------------+-------+
 * </pre>
 *
 * Keys come from a counter-based generator (a SplitMix64 finalizer of seed and index), so any
 * range of records can be generated independently and in parallel, and the same seed always
 * gives the same file. The payload follows gensort's layout but not its exact bytes (nor its
 * random stream), so files are not byte-identical to the official tool's. Stateless.
 */
public final class SortBenchmarkRecords {

    public static final RecordLayout LAYOUT = RecordLayout.SORT_BENCHMARK;
    private static final int RECORD = 100;
    /**
     * Records per I/O chunk when writing and checking files: 102,400 records, 10,240,000 bytes,
     * a whole number of 4 KiB pages, so chunks can be written and read with {@code O_DIRECT}.
     */
    private static final int CHUNK_RECORDS = 102_400;
    private static final int CHUNK_BYTES = CHUNK_RECORDS * RECORD;
    /** Each writer thread's chunk, page-aligned. */
    private static final ThreadLocal<MemorySegment> CHUNK = ThreadLocal.withInitial(
            () -> Arena.ofAuto().allocate(CHUNK_BYTES, DirectRangeIo.PAGE));

    private SortBenchmarkRecords() {}

    /**
     * Fills {@code out} with records {@code first, first+1, ...} of the stream of {@code seed}.
     * Each record is 13 stores of 2 to 8 bytes, its hex digits made eight at a time in a long:
     * written a byte at a time, as the layout draws it, it took three times as long
     * (docs/benchmarks.md, "Generating records").
     */
    public static void generate(long seed, long first, MemorySegment out) {
        long n = LAYOUT.records(out.byteSize());
        for (long i = 0; i < n; i++) {
            long index = first + i;
            long at = i * RECORD;
            long k1 = mix(seed ^ (index * 0x9E3779B97F4A7C15L));
            long k2 = mix(k1 + 0x632BE59BD9B4E019L);
            out.set(LONG, at, k1);
            out.set(SHORT, at + 8, (short) k2);
            out.set(SHORT, at + 10, (short) 0x1100); // bytes 00 11
            out.set(LONG, at + 12, ZEROS); // the index's high 64 bits, always 0
            out.set(LONG, at + 20, ZEROS);
            out.set(LONG, at + 28, hexDigits((int) (index >>> 32)));
            out.set(LONG, at + 36, hexDigits((int) index));
            out.set(INT, at + 44, 0xBBAA9988);
            long letters = ('A' + Long.remainderUnsigned(index, 26)) * 0x0101010101010101L;
            for (int f = 48; f < 96; f += 8) {
                out.set(LONG, at + f, letters);
            }
            out.set(INT, at + 96, 0xFFEEDDCC);
        }
    }

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Eight ASCII '0' digits. */
    private static final long ZEROS = 0x3030303030303030L;

    /**
     * The eight uppercase hex digits of {@code x}, most significant first, as the bytes of a
     * little-endian long: each nibble spread into a byte of its own, then '0' added, and 7 more
     * where the nibble is 10 or above.
     */
    private static long hexDigits(int x) {
        long v = x & 0xFFFFFFFFL;
        v = (v | (v << 16)) & 0x0000FFFF0000FFFFL;
        v = (v | (v << 8)) & 0x00FF00FF00FF00FFL;
        v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0FL; // byte j holds nibble j, the least significant first
        v = Long.reverseBytes(v);
        long letter = ((v + 0x0606060606060606L) >>> 4) & 0x0101010101010101L;
        return v + ZEROS + letter * 7;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Writes {@code records} records of {@code seed} to {@code file} with {@code threads} writers;
     * the file appears under its name only when complete (temp name, then rename). Whole chunks
     * are written with {@code O_DIRECT} where the file system allows it (see {@link DirectRangeIo}).
     */
    public static void writeFile(Path file, long records, long seed, int threads) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        boolean done = false;
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE);
             FileChannel direct = DirectRangeIo.openDirect(temp.toString(), StandardOpenOption.WRITE)) {
            List<Future<Void>> parts = new ArrayList<>();
            for (long first = 0; first < records; first += CHUNK_RECORDS) {
                long start = first;
                int n = (int) Math.min(CHUNK_RECORDS, records - first);
                parts.add(pool.submit(() -> {
                    MemorySegment chunk = CHUNK.get().asSlice(0, (long) n * RECORD);
                    generate(seed, start, chunk);
                    DirectRangeIo.writePiece(out, direct, chunk, start * RECORD);
                    return null;
                }));
            }
            awaitAll(parts, "write", file);
            out.force(false);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            done = true;
        } finally {
            pool.shutdownNow();
            if (!done) {
                Files.deleteIfExists(temp);
            }
        }
    }

    /** The checksum of the records of {@code block}. */
    public static Checksum checksum(MemorySegment block) {
        long bytes = LAYOUT.records(block.byteSize()) * RECORD;
        CRC32 crc = new CRC32();
        Checksum.Accumulator sum = new Checksum.Accumulator();
        for (long at = 0; at < bytes; at += CRC_VIEW_BYTES) { // a buffer view holds at most 2 GiB
            int view = (int) Math.min(CRC_VIEW_BYTES, bytes - at);
            addRecordCrcs(block.asSlice(at, view).asByteBuffer(), view, crc, sum);
        }
        return sum.value();
    }

    /** Whole records per buffer view of {@link #checksum}: 1 GB. */
    private static final int CRC_VIEW_BYTES = 10_000_000 * RECORD;

    /**
     * Adds to {@code sum} the CRC-32 of each record of the first {@code bytes} bytes of
     * {@code records} (whole records), each over exactly its record's bytes.
     */
    private static void addRecordCrcs(ByteBuffer records, int bytes, CRC32 crc, Checksum.Accumulator sum) {
        for (int off = 0; off < bytes; off += RECORD) {
            crc.reset();
            crc.update(records.limit(off + RECORD).position(off));
            sum.addCrc(crc.getValue());
        }
    }

    /**
     * What valsort reports of a file.
     *
     * @param firstDisorder index of the first record whose key is smaller than the one before it, or -1
     */
    public record Validation(long records, long duplicateKeys, long firstDisorder, Checksum checksum) {
        public boolean ordered() {
            return firstDisorder < 0;
        }
    }

    /**
     * Reads {@code file} once, in 10 MB chunks ({@code O_DIRECT} where the file system allows it):
     * order, duplicate keys, record count and checksum. The file is cut into one range of chunks
     * per processor (at most {@value #RANGES_MAX}), each read and checked on a thread of its own,
     * so the check runs at the disk's speed rather than one core's; where two ranges meet, their
     * keys are compared after.
     */
    public static Validation validate(Path file) throws IOException {
        return validate(file, Math.min(RANGES_MAX, Runtime.getRuntime().availableProcessors()), CHUNK_RECORDS);
    }

    /**
     * Ranges checked at once at most: each holds a chunk of memory, and eight cores check
     * records faster than a disk gives them (one checks about 3 GB/s).
     */
    private static final int RANGES_MAX = 8;

    /**
     * {@link #validate(Path)} in at most {@code ranges} ranges of chunks of {@code chunkRecords}
     * records, a multiple of {@value #ALIGNED_RECORDS} so that every chunk starts on a page.
     */
    static Validation validate(Path file, int ranges, int chunkRecords) throws IOException {
        if (ranges < 1 || chunkRecords < 1 || chunkRecords % ALIGNED_RECORDS != 0) {
            throw new IllegalArgumentException(ranges + " ranges of " + chunkRecords + "-record chunks");
        }
        long size = Files.size(file);
        if (size % RECORD != 0) {
            throw new CroupierException(ErrorCode.BAD_INPUT, file + ": " + size + " bytes is not a whole number of "
                    + RECORD + "-byte records (the last one starts at byte offset " + (size / RECORD * RECORD) + ")");
        }
        long chunkBytes = (long) chunkRecords * RECORD;
        long chunks = (size + chunkBytes - 1) / chunkBytes;
        int parts = (int) Math.max(1, Math.min(ranges, chunks));
        ExecutorService pool = Executors.newFixedThreadPool(parts);
        try (FileChannel buffered = FileChannel.open(file, StandardOpenOption.READ);
             FileChannel direct = DirectRangeIo.openDirect(file.toString(), StandardOpenOption.READ)) {
            List<Future<RangeCheck>> checks = new ArrayList<>(parts);
            for (int p = 0; p < parts; p++) {
                long from = chunks * p / parts * chunkBytes;
                long to = Math.min(size, chunks * (p + 1) / parts * chunkBytes);
                checks.add(pool.submit(() -> checkRange(buffered, direct, from, to, chunkBytes)));
            }
            long records = 0;
            long duplicates = 0;
            long disorder = -1;
            Checksum sum = Checksum.ZERO;
            byte[] last = null;
            for (RangeCheck range : awaitAll(checks, "check", file)) {
                if (range.records() > 0) {
                    // where the range before ends and this one starts, then within this one: in file order
                    if (last != null) {
                        int c = Arrays.compareUnsigned(last, range.firstKey());
                        if (c == 0) {
                            duplicates++;
                        } else if (c > 0 && disorder < 0) {
                            disorder = records;
                        }
                    }
                    if (disorder < 0) {
                        disorder = range.firstDisorder();
                    }
                    last = range.lastKey();
                }
                records += range.records();
                duplicates += range.duplicateKeys();
                sum = sum.plus(range.checksum());
            }
            return new Validation(records, duplicates, disorder, sum);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The results of {@code parts}, in order, once each is done; a part's failure is thrown as
     * an {@link IOException} that names what could not be done to {@code file}, then why (a
     * failed read or write of the file does not name it).
     */
    private static <T> List<T> awaitAll(List<Future<T>> parts, String verb, Path file) throws IOException {
        List<T> results = new ArrayList<>(parts.size());
        try {
            for (Future<T> part : parts) {
                results.add(part.get());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: cannot " + verb + " " + file, e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            throw new IOException("cannot " + verb + " " + file + ": "
                    + (cause instanceof IOException ? cause.getMessage() : cause), cause);
        }
        return results;
    }

    /** Records per chunk that make a whole number of 4 KiB pages: 102,400 bytes. */
    static final int ALIGNED_RECORDS = 1024;

    /**
     * What one range of a file holds: its records' count, duplicate keys and checksum, the file
     * index of its first record out of order (-1 if none), and its first and last keys (null if
     * it has no records), which the ranges around it are checked against.
     */
    private record RangeCheck(long records, long duplicateKeys, long firstDisorder, Checksum checksum,
                              byte[] firstKey, byte[] lastKey) {}

    /**
     * Checks the records of bytes {@code [from, to)} of the file open as {@code buffered} (and
     * {@code direct}), reading {@code chunkBytes} at a time. Its failures do not name the file:
     * {@link #awaitAll} does.
     */
    private static RangeCheck checkRange(FileChannel buffered, FileChannel direct, long from, long to,
                                         long chunkBytes) throws IOException {
        int keyBytes = LAYOUT.keyBytes();
        long duplicates = 0;
        long disorder = -1;
        long index = from / RECORD;
        byte[] first = null;
        CRC32 crc = new CRC32();
        Checksum.Accumulator sum = new Checksum.Accumulator();
        try (Arena arena = Arena.ofConfined()) {
            FileChannel in = direct != null ? direct : buffered;
            MemorySegment chunk = arena.allocate(chunkBytes, DirectRangeIo.PAGE);
            MemorySegment previous = arena.allocate(keyBytes);
            ByteBuffer bb = chunk.asByteBuffer();
            long position = from;
            while (position < to) {
                long start = position;
                // whole pages, so that O_DIRECT takes the read; the file's last page reads short
                long pages = (to - start + DirectRangeIo.PAGE - 1) / DirectRangeIo.PAGE * DirectRangeIo.PAGE;
                bb.clear().limit((int) Math.min(chunkBytes, pages));
                while (bb.hasRemaining() && position < to) {
                    int n;
                    try {
                        n = in.read(bb, position);
                    } catch (IOException e) {
                        if (in == buffered) {
                            throw e;
                        }
                        in = buffered; // O_DIRECT opened but refused: read the rest through the page cache
                        continue;
                    }
                    if (n < 0) {
                        throw new IOException("it ended at byte offset " + position + " while reading bytes "
                                + from + ".." + to);
                    }
                    position += n;
                }
                int bytes = (int) (Math.min(position, to) - start);
                if (first == null) {
                    first = chunk.asSlice(0, keyBytes).toArray(ValueLayout.JAVA_BYTE);
                }
                for (int off = 0; off < bytes; off += RECORD, index++) {
                    if (off > 0 || start > from) {
                        int c = off == 0 ? KeyOrder.compare(previous, 0, chunk, 0, keyBytes)
                                : KeyOrder.compare(chunk, off - RECORD, chunk, off, keyBytes);
                        if (c == 0) {
                            duplicates++;
                        } else if (c > 0 && disorder < 0) {
                            disorder = index;
                        }
                    }
                }
                addRecordCrcs(bb, bytes, crc, sum);
                MemorySegment.copy(chunk, bytes - RECORD, previous, 0, keyBytes);
            }
            byte[] last = first == null ? null : previous.toArray(ValueLayout.JAVA_BYTE);
            return new RangeCheck(index - from / RECORD, duplicates, disorder, sum.value(), first, last);
        }
    }
}
