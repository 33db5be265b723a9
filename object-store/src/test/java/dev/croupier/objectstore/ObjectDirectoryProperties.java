package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever the order of listings and unlistings, in a table small enough that ids collide and
 * unlisted slots pile up, a reader finds exactly the listed ids, where they were listed.
 */
class ObjectDirectoryProperties {

    /** List (name 0..47, true) or unlist (name, false) steps. */
    @Provide
    Arbitrary<List<int[]>> steps() {
        return Arbitraries.integers().between(0, 47).flatMap(name -> Arbitraries.of(0, 1)
                .map(kind -> new int[] {name, kind})).list().ofMinSize(1).ofMaxSize(300);
    }

    @Property(tries = 200)
    void aReaderFindsExactlyWhatIsListed(@ForAll("steps") List<int[]> steps) throws Exception {
        Path dir = Files.createTempDirectory("croupier-directory-");
        try (ObjectDirectory directory = new ObjectDirectory(dir, 64); Arena arena = Arena.ofShared()) {
            MemorySegment read;
            try (FileChannel ch = FileChannel.open(directory.file(), StandardOpenOption.READ)) {
                read = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            }
            Map<Integer, Integer> slotOf = new HashMap<>();
            Map<Integer, Long> offsetOf = new HashMap<>();
            long next = 0;
            for (int[] step : steps) {
                int name = step[0];
                if (step[1] == 1 && !slotOf.containsKey(name)) {
                    long offset = next++ * 4096;
                    int slot = directory.list(id(name), offset, 100 + name);
                    if (slot >= 0) { // no free slot within the probes: not listed, as the store allows
                        slotOf.put(name, slot);
                        offsetOf.put(name, offset);
                    }
                } else if (step[1] == 0 && slotOf.containsKey(name)) {
                    directory.unlist(slotOf.remove(name));
                    offsetOf.remove(name);
                }
                for (int n = 0; n < 48; n++) {
                    ObjectDirectory.Listing l = ObjectDirectory.find(read, id(n));
                    if (offsetOf.containsKey(n)) {
                        assertNotNull(l, "name " + n + " is listed");
                        assertEquals(offsetOf.get(n), l.offset(), "offset of name " + n);
                        assertEquals(100 + n, l.length(), "length of name " + n);
                        assertEquals(slotOf.get(n), l.slot());
                    } else {
                        assertNull(l, "name " + n + " is not listed");
                    }
                }
            }
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** Ids in groups of four that share their high half, so a match must take both halves. */
    private static ObjectId id(int name) {
        return ObjectId.of(0x5EED0000L + name / 4, name);
    }
}
