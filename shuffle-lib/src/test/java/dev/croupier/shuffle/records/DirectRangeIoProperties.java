package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Ranges written in place, in any order, from memory placed for them (whole pages direct, the
 * rest buffered) or from memory at any other offset (all buffered), make up exactly the file's
 * bytes; any range reads back exactly, and a range past the end is an error naming the file.
 */
class DirectRangeIoProperties {

    @Property(tries = 30)
    void rangesWrittenInAnyOrderMakeUpTheFile(@ForAll @IntRange(min = 0, max = 2000) int records,
                                               @ForAll @IntRange(min = 0, max = 12) int cuts,
                                               @ForAll("recordSizes") int recordBytes,
                                               @ForAll @IntRange(min = -1, max = 4095) int misplacedBy,
                                               @ForAll long seed) throws IOException {
        Random random = new Random(seed);
        int fileBytes = records * recordBytes;
        byte[] expected = new byte[fileBytes];
        random.nextBytes(expected);
        TreeSet<Integer> points = new TreeSet<>(List.of(0, records));
        for (int i = 0; i < cuts; i++) {
            points.add(random.nextInt(records + 1));
        }
        List<int[]> ranges = new ArrayList<>();
        Integer from = points.first();
        for (Integer to : points.tailSet(from, false)) {
            ranges.add(new int[] {from * recordBytes, to * recordBytes});
            from = to;
        }
        Collections.shuffle(ranges, random);
        Path file = Files.createTempFile("croupier-ranges-", ".bin");
        try {
            Files.write(file, new byte[fileBytes]);
            for (int[] range : ranges) {
                int size = range[1] - range[0];
                // -1: memory placed for the range; else placed that many bytes past a page
                MemorySegment bytes = misplacedBy < 0 ? DirectRangeIo.allocateFor(range[0], size)
                        : Arena.ofAuto().allocate(size + misplacedBy, DirectRangeIo.PAGE).asSlice(misplacedBy, size);
                MemorySegment.copy(MemorySegment.ofArray(expected), range[0], bytes, 0, size);
                assertEquals(size, DirectRangeIo.write(file.toString(), range[0], bytes, false));
            }
            assertArrayEquals(expected, Files.readAllBytes(file));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Provide
    Arbitrary<Integer> recordSizes() {
        return Arbitraries.of(1, 7, 100, 4096, 5000);
    }

    @Property(tries = 30)
    void anyRangeReadsBackExactly(@ForAll @IntRange(min = 1, max = 100_000) int fileBytes,
                                  @ForAll @IntRange(min = 0, max = 100_000) int from,
                                  @ForAll @IntRange(min = 0, max = 100_000) int length,
                                  @ForAll long seed) throws IOException {
        byte[] bytes = new byte[fileBytes];
        new Random(seed).nextBytes(bytes);
        Path file = Files.createTempFile("croupier-read-", ".bin");
        try {
            Files.write(file, bytes);
            int start = from % fileBytes;
            int size = Math.min(length, fileBytes - start);
            MemorySegment range = DirectRangeIo.read(file.toString(), start, size);
            if (range == null) {
                return; // no O_DIRECT on this file system: the caller maps instead
            }
            assertArrayEquals(Arrays.copyOfRange(bytes, start, start + size), range.toArray(ValueLayout.JAVA_BYTE));
            IOException past = assertThrows(IOException.class,
                    () -> DirectRangeIo.read(file.toString(), start, fileBytes - start + 1));
            assertTrue(past.getMessage().contains(file.toString()) && past.getMessage().contains("ended at byte offset"),
                    past.getMessage());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Property(tries = 10)
    void aCreatedFileHoldsJustTheRange(@ForAll @IntRange(min = 0, max = 100_000) int size, @ForAll long seed)
            throws IOException {
        byte[] expected = new byte[size];
        new Random(seed).nextBytes(expected);
        Path file = Files.createTempFile("croupier-part-", ".bin");
        try {
            Files.write(file, new byte[size + 5000]);
            MemorySegment bytes = DirectRangeIo.allocateFor(0, size);
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, bytes, 0, size);
            DirectRangeIo.write(file.toString(), 0, bytes, true);
            assertArrayEquals(expected, Files.readAllBytes(file));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
