package dev.croupier.shuffle.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Ranges written in place, in any order, through memory from {@link FileRangeWriter#allocate}
 * (whole pages direct) or from the heap (all buffered), make up exactly the file's bytes.
 */
class FileRangeWriterProperties {

    @Property(tries = 30)
    void rangesWrittenInAnyOrderMakeUpTheFile(@ForAll @IntRange(min = 0, max = 200_000) int fileBytes,
                                               @ForAll @IntRange(min = 0, max = 12) int cuts,
                                               @ForAll long seed) throws IOException {
        Random random = new Random(seed);
        byte[] expected = new byte[fileBytes];
        random.nextBytes(expected);
        TreeSet<Integer> points = new TreeSet<>(List.of(0, fileBytes));
        for (int i = 0; i < cuts; i++) {
            points.add(random.nextInt(fileBytes + 1));
        }
        List<int[]> ranges = new ArrayList<>();
        Integer from = points.first();
        for (Integer to : points.tailSet(from, false)) {
            ranges.add(new int[] {from, to});
            from = to;
        }
        Collections.shuffle(ranges, random);
        Path file = Files.createTempFile("croupier-ranges-", ".bin");
        try {
            Files.write(file, new byte[fileBytes]);
            for (int[] range : ranges) {
                int size = range[1] - range[0];
                MemorySegment records = random.nextInt(4) == 0
                        ? MemorySegment.ofArray(new byte[size])
                        : FileRangeWriter.allocate(size, range[0]);
                MemorySegment.copy(MemorySegment.ofArray(expected), range[0], records, 0, size);
                assertEquals(size, FileRangeWriter.write(records, file.toString(), range[0], false));
            }
            assertArrayEquals(expected, Files.readAllBytes(file));
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
            MemorySegment records = FileRangeWriter.allocate(size, 0);
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, records, 0, size);
            FileRangeWriter.write(records, file.toString(), 0, true);
            assertArrayEquals(expected, Files.readAllBytes(file));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
