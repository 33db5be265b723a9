package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The spill file layout: any mix of small and page-aligned objects is written in whole pages,
 * with {@code O_DIRECT} where the file system allows it or through the page cache, and reads back
 * exactly, into page-aligned memory (the direct path on a direct file) and into unaligned memory
 * (the buffered path), singly and as runs, and in any range (as an {@link ObjectReader} reads).
 */
class SpillFrameProperties {

    @Property(tries = 40)
    void framesOfAnySizeReadBackExactly(
            @ForAll @Size(min = 1, max = 12) List<@IntRange(min = 0, max = 300_000) Integer> sizes,
            @ForAll @IntRange(min = 64, max = 2 << 20) int fileBytes,
            @ForAll boolean tryDirect,
            @ForAll long rangeSeed) throws IOException {
        Path dir = Files.createTempDirectory("croupier-spill-frames-");
        try (Arena arena = Arena.ofShared()) {
            SpillWriter writer = new SpillWriter(dir, fileBytes, Compression.NONE, tryDirect);
            List<SpillWriter.Item> items = new ArrayList<>();
            for (int i = 0; i < sizes.size(); i++) {
                // page-aligned as the store allocates objects of at least PAGE_ALIGNED_MIN
                MemorySegment bytes = arena.allocate(Math.max(1, sizes.get(i)), FreeListAllocator.PAGE)
                        .asSlice(0, sizes.get(i));
                TestStores.fill(bytes, i);
                items.add(new SpillWriter.Item(TestStores.freshId(), bytes));
            }
            // two batches, so runs also cross the padding at a batch's end
            SpillWriter.Result firstBatch = writer.write(items.subList(0, items.size() / 2));
            SpillWriter.Result secondBatch = writer.write(items.subList(items.size() / 2, items.size()));
            assertNull(firstBatch.failure());
            assertNull(secondBatch.failure());
            List<SpillRecord> records = new ArrayList<>(firstBatch.records());
            records.addAll(secondBatch.records());
            List<SpillFile> files = new ArrayList<>(firstBatch.newFiles());
            files.addAll(secondBatch.newFiles());
            assertEquals(items.size(), records.size());
            boolean directHere = tryDirect && directWorksIn(dir);
            for (SpillFile file : files) {
                assertEquals(directHere, file.direct, file + " O_DIRECT");
                assertEquals(0, file.end() % SpillFrame.PAGE, file + " ends inside a page");
                assertEquals(file.end(), Files.size(file.path));
            }
            List<ObjectId> ids = new ArrayList<>();
            List<MemorySegment> aligned = new ArrayList<>();
            for (int i = 0; i < items.size(); i++) {
                SpillWriter.Item item = items.get(i);
                SpillRecord record = records.get(i);
                long size = item.bytes().byteSize();
                if (SpillFrame.pageAligned(size)) {
                    assertEquals(0, record.payloadOffset() % SpillFrame.PAGE, "payload of object " + i);
                }
                MemorySegment page = arena.allocate(Math.max(1, size), FreeListAllocator.PAGE).asSlice(0, size);
                SpillReader.readInto(item.id(), record, page);
                assertEquals(-1, TestStores.firstMismatch(page, i), "aligned read of object " + i);
                MemorySegment odd = arena.allocate(size + 64, 64).asSlice(64, size);
                SpillReader.readInto(item.id(), record, odd);
                assertEquals(-1, TestStores.firstMismatch(odd, i), "unaligned read of object " + i);
                // any range, as a reader that streams the object to another node reads it
                ByteBuffer window = SpillFrame.pages(ObjectReader.MAX_READ_BYTES / SpillFrame.PAGE + 2);
                long offset = size == 0 ? 0 : Math.floorMod(rangeSeed * (i + 1), size);
                int length = (int) Math.min(size - offset, Math.floorMod(rangeSeed >>> 7, 200_000));
                MemorySegment range = SpillReader.readRange(item.id(), record, size, offset, length, window, true);
                for (int b = 0; b < length; b++) {
                    assertEquals(TestStores.byteAt(i, offset + b), range.get(ValueLayout.JAVA_BYTE, b),
                            "byte " + (offset + b) + " of object " + i);
                }
                ids.add(item.id());
                aligned.add(arena.allocate(Math.max(1, size), FreeListAllocator.PAGE).asSlice(0, size));
            }
            // every file's frames as one run, as prefetch reads them
            for (int from = 0; from < items.size(); ) {
                int to = from;
                while (to < items.size() && records.get(to).file() == records.get(from).file()) {
                    to++;
                }
                SpillReader.readRun(ids.subList(from, to), records.subList(from, to), aligned.subList(from, to));
                for (int i = from; i < to; i++) {
                    assertEquals(-1, TestStores.firstMismatch(aligned.get(i), i), "run read of object " + i);
                }
                from = to;
            }
            for (SpillFile file : files) {
                file.delete();
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    private static boolean directWorksIn(Path dir) {
        Path probe = dir.resolve("direct-probe");
        try (FileChannel ignored = FileChannel.open(probe, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                ExtendedOpenOption.DIRECT)) {
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }
}
