package dev.croupier.benchmarks.objectstore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Measures whether Chronicle Queue can carry spilled object payloads at disk speed, against
 * plain sequential files written with one large write per object, and how fast Chronicle
 * appends the small (object, file, offset, length) index records the store's spill log holds.
 *
 * <p>Every variant writes the same bytes from off-heap memory and ends with the data forced to
 * disk (fdatasync of every file), so the figures compare like with like.
 *
 * <pre>
 * java [croupier JVM flags] -cp benchmarks/target/benchmarks.jar \
 *     dev.croupier.benchmarks.objectstore.SpillLogChoiceBenchmark &lt;dir&gt; &lt;total MiB&gt; &lt;object bytes&gt;...
 * </pre>
 */
public final class SpillLogChoiceBenchmark {

    private static final long FILE_BYTES = 64L << 20;
    private static final int STAGING_BYTES = 1 << 20;

    private SpillLogChoiceBenchmark() {
    }

    /**
     * Runs the comparison.
     *
     * @param args directory, total MiB per variant, then one or more object sizes in bytes
     * @throws IOException if the directory cannot be written
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: SpillLogChoiceBenchmark <dir> <total MiB> <object bytes>...");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        long total = Long.parseLong(args[1]) << 20;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(256L << 20, 4096);
            byte[] noise = new byte[1 << 20];
            ThreadLocalRandom.current().nextBytes(noise);
            for (long o = 0; o < source.byteSize(); o += noise.length) {
                MemorySegment.copy(MemorySegment.ofArray(noise), 0, source, o, noise.length);
            }
            for (int i = 2; i < args.length; i++) {
                int objectBytes = Integer.parseInt(args[i]);
                long count = total / objectBytes;
                double plain = plainFiles(dir.resolve("plain"), source, objectBytes, count);
                double chronicle = chroniclePayloads(dir.resolve("cq"), source, objectBytes, count);
                double index = chronicleIndex(dir.resolve("cq-index"), count);
                System.out.printf(Locale.ROOT,
                        "object %8d B: plain files %7.1f MiB/s | chronicle payloads %7.1f MiB/s (%.0f%% of plain)"
                                + " | chronicle index records %,.0f /s (%,.0f objects/s needed at plain speed)%n",
                        objectBytes, plain, chronicle, 100 * chronicle / plain, index,
                        plain * (1 << 20) / objectBytes);
            }
        }
    }

    private static double plainFiles(Path dir, MemorySegment source, int objectBytes, long count) throws IOException {
        Files.createDirectories(dir);
        long start = System.nanoTime();
        FileChannel channel = null;
        int fileNo = 0;
        long written = 0;
        for (long i = 0; i < count; i++) {
            if (channel == null || channel.position() >= FILE_BYTES) {
                if (channel != null) {
                    channel.force(false);
                    channel.close();
                }
                channel = FileChannel.open(dir.resolve("spill-" + (fileNo++)), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            }
            ByteBuffer buffer = slice(source, i, objectBytes).asByteBuffer();
            while (buffer.hasRemaining()) {
                written += channel.write(buffer);
            }
        }
        if (channel != null) {
            channel.force(false);
            channel.close();
        }
        double mibPerSecond = written / 1048576.0 / ((System.nanoTime() - start) / 1e9);
        deleteTree(dir);
        return mibPerSecond;
    }

    private static double chroniclePayloads(Path dir, MemorySegment source, int objectBytes, long count)
            throws IOException {
        long start = System.nanoTime();
        long written = 0;
        try (ChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FAST_DAILY)
                .blockSize(256L << 20).build();
             ExcerptAppender appender = queue.createAppender()) {
            // Chronicle Bytes refuses ByteBuffers over shared-arena segments (it needs their raw
            // address, which the JDK withholds for closeable shared sessions), so payloads pass
            // through a heap staging array: the extra copy is part of what this variant costs.
            byte[] staging = new byte[STAGING_BYTES];
            for (long i = 0; i < count; i++) {
                MemorySegment object = slice(source, i, objectBytes);
                try (DocumentContext dc = appender.writingDocument()) {
                    Bytes<?> bytes = dc.wire().bytes();
                    for (long o = 0; o < objectBytes; o += staging.length) {
                        int n = (int) Math.min(staging.length, objectBytes - o);
                        MemorySegment.copy(object, java.lang.foreign.ValueLayout.JAVA_BYTE, o, staging, 0, n);
                        bytes.write(staging, 0, n);
                    }
                }
                written += objectBytes;
            }
        }
        forceAll(dir);
        double mibPerSecond = written / 1048576.0 / ((System.nanoTime() - start) / 1e9);
        deleteTree(dir);
        return mibPerSecond;
    }

    private static double chronicleIndex(Path dir, long count) throws IOException {
        long start = System.nanoTime();
        try (ChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FAST_DAILY).build();
             ExcerptAppender appender = queue.createAppender()) {
            for (long i = 0; i < count; i++) {
                try (DocumentContext dc = appender.writingDocument()) {
                    Bytes<?> bytes = dc.wire().bytes();
                    bytes.writeLong(i).writeLong(~i).writeInt((int) (i >>> 10)).writeLong(i * 128)
                            .writeLong(i * 128).writeLong(128).writeInt(0);
                }
            }
        }
        forceAll(dir);
        double perSecond = count / ((System.nanoTime() - start) / 1e9);
        deleteTree(dir);
        return perSecond;
    }

    private static MemorySegment slice(MemorySegment source, long i, int objectBytes) {
        long slots = source.byteSize() / objectBytes;
        return source.asSlice((i % slots) * objectBytes, objectBytes);
    }

    private static void forceAll(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    channel.force(false);
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
