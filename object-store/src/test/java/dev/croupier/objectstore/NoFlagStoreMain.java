package dev.croupier.objectstore;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Main class of the JVM that {@link NoFlagEmbeddingTest} starts with no flags at all, as an
 * application that embeds the store would be: puts 48 MiB of {@code byte[]} blocks through an
 * 8 MiB store, reads every block back, and checks that the store spilled, that its spill log
 * (the plain index file, as Chronicle cannot work here) locates every spilled block, and that
 * the store turned Chronicle's usage analytics off. Prints "OK ..." and exits 0, or exits 1.
 */
public final class NoFlagStoreMain {

    private static final int BLOCK = 1 << 20;
    private static final int BLOCKS = 48;

    private NoFlagStoreMain() {
    }

    /**
     * Runs the check.
     *
     * @param args the directory to put the store's memory and spill files in
     * @throws Exception on any failure (non-zero exit)
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        List<String> problems = new ArrayList<>();
        try (ObjectStore store = ObjectStore.builder().name("no-flags").capacityBytes(8 << 20)
                .memoryDirectory(dir).spillDirectory(dir).build()) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i = 0; i < BLOCKS; i++) {
                ids.add(store.put(new ObjectId(42, i), MemorySegment.ofArray(block(i))));
            }
            for (int i = 0; i < BLOCKS; i++) {
                try (PinnedObject pinned = store.get(ids.get(i))) {
                    if (!Arrays.equals(block(i), pinned.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))) {
                        problems.add("block " + i + " came back different");
                    }
                }
            }
            StoreMetrics m = store.metrics();
            if (m.bytesSpilled() < (BLOCKS - 8L) * BLOCK) {
                problems.add("spilled only " + m.bytesSpilled() + " bytes: " + m);
            }
            Path spillDir = dir.resolve("croupier-store-no-flags");
            long logged = SpillLog.readAll(spillDir).stream().filter(e -> e.kind() == SpillLog.SPILLED)
                    .map(SpillLog.Entry::id).distinct().count();
            if (logged < BLOCKS - 8 || !Files.exists(spillDir.resolve(SpillLog.INDEX_FILE))
                    || Files.exists(spillDir.resolve(SpillLog.DIRECTORY))) {
                problems.add("the spill index " + spillDir.resolve(SpillLog.INDEX_FILE) + " locates " + logged
                        + " spilled blocks");
            }
            String analytics = System.getProperty(SpillLog.ANALYTICS_PROPERTY);
            if (!"true".equals(analytics)) {
                problems.add(SpillLog.ANALYTICS_PROPERTY + " = " + analytics);
            }
            if (problems.isEmpty()) {
                System.out.println("OK " + BLOCKS + " blocks round-tripped, " + m.bytesSpilled() + " bytes spilled, "
                        + logged + " blocks in " + SpillLog.INDEX_FILE + ", " + SpillLog.ANALYTICS_PROPERTY + "="
                        + analytics);
                return;
            }
        }
        problems.forEach(System.out::println);
        System.exit(1);
    }

    /** Block {@code i}: bytes derived from its number, so each block differs from the others. */
    private static byte[] block(int i) {
        byte[] bytes = new byte[BLOCK];
        for (int j = 0; j < bytes.length; j++) {
            bytes[j] = TestStores.byteAt(i, j);
        }
        return bytes;
    }
}
