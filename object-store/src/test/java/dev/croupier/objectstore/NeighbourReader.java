package dev.croupier.objectstore;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Main class of the second process in {@link ZeroCopyNeighbourTest}: maps an object's bytes
 * read-only from (file, offset, length), without asking the store for a copy, and checks them.
 * With {@code log <spillDir> <id hex>} it first finds the location in the store's spill log.
 * Exit code 0 and "OK" if every byte matches the test pattern of the given seed.
 */
public final class NeighbourReader {

    private NeighbourReader() {
    }

    /**
     * Runs the check.
     *
     * @param args {@code map <file> <offset> <length> <seed>} or {@code log <spillDir> <id> <seed>}
     * @throws Exception on any failure (non-zero exit)
     */
    public static void main(String[] args) throws Exception {
        Path file;
        long offset;
        long length;
        long seed;
        if (args[0].equals("log")) {
            Path spillDir = Path.of(args[1]);
            ObjectId id = ObjectId.parse(args[2]);
            seed = Long.parseLong(args[3]);
            SpillLog.Entry found = null;
            for (SpillLog.Entry e : SpillLog.readAll(spillDir)) {
                if (e.kind() == SpillLog.SPILLED && id.equals(e.id())) {
                    found = e;
                }
            }
            if (found == null) {
                System.out.println("NOT IN LOG " + id);
                System.exit(3);
                return;
            }
            file = spillDir.resolve(String.format("spill-%06d.dat", found.fileNumber()));
            offset = found.frameOffset() + SpillFrame.FRAME_HEADER_BYTES;
            length = found.rawLength();
        } else {
            file = Path.of(args[1]);
            offset = Long.parseLong(args[2]);
            length = Long.parseLong(args[3]);
            seed = Long.parseLong(args[4]);
        }
        try (Arena arena = Arena.ofConfined();
             FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment bytes = channel.map(FileChannel.MapMode.READ_ONLY, offset, length, arena);
            long mismatch = TestStores.firstMismatch(bytes, seed);
            if (mismatch >= 0) {
                System.out.println("MISMATCH at " + mismatch + " in " + file + " offset " + offset);
                System.exit(2);
            }
        }
        System.out.println("OK " + length + " bytes from " + file + " at " + offset);
    }
}
