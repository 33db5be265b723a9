package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A second JVM maps objects of this store by (file, offset, length) and reads them without a copy. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZeroCopyNeighbourTest {

    private static final int OBJECT = 300_000;

    @TempDir
    Path dir;

    @Test
    void anotherProcessReadsResidentAndSpilledObjectsInPlace() throws Exception {
        try (ObjectStore store = ObjectStore.builder().name("neighbour").capacityBytes(2 << 20)
                .memoryDirectory(dir).spillDirectory(dir).spillFileBytes(512 << 10).build()) {
            List<ObjectId> ids = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ObjectId id = TestStores.freshId();
                try (WritableObject w = store.create(id, OBJECT)) {
                    TestStores.fill(w.segment(), i);
                    w.seal();
                }
                ids.add(id);
            }
            int newest = ids.size() - 1;
            try (PinnedObject pinned = store.get(ids.get(newest))) {
                ObjectLocation inMemory = store.describe(ids.get(newest));
                assertTrue(inMemory.file().getFileName().toString().equals(MemoryRegion.FILE_NAME), inMemory.toString());
                assertEquals(OBJECT, pinned.size());
                runNeighbour("map", inMemory.file().toString(), Long.toString(inMemory.offset()),
                        Long.toString(inMemory.length()), Integer.toString(newest));
            }
            ObjectLocation spilled = store.describe(ids.get(0));
            assertTrue(spilled.file().getFileName().toString().startsWith("spill-"), spilled.toString());
            runNeighbour("map", spilled.file().toString(), Long.toString(spilled.offset()),
                    Long.toString(spilled.length()), "0");
            runNeighbour("log", spilled.file().getParent().toString(), ids.get(0).toString(), "0");
        }
    }

    private static void runNeighbour(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> !a.startsWith("-agentlib") && !a.startsWith("-javaagent")).toList());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(NeighbourReader.class.getName());
        command.addAll(List.of(args));
        Path log = java.nio.file.Files.createTempFile("neighbour", ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            boolean finished = process.waitFor(60, TimeUnit.SECONDS);
            String output = java.nio.file.Files.readString(log);
            assertTrue(finished, "neighbour process did not finish; it said: " + output);
            assertEquals(0, process.exitValue(), "neighbour said: " + output);
            assertTrue(output.contains("OK "), output);
        } finally {
            process.destroyForcibly();
            java.nio.file.Files.deleteIfExists(log);
        }
    }
}
