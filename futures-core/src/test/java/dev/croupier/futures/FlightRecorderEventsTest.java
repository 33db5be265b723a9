package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JDK Flight Recording of a small job shows its life: an event per task attempt (name, node,
 * outcome, output bytes), per object fetched from another node, per spill write and per restore,
 * with sizes that match what the job made.
 */
@Timeout(120)
class FlightRecorderEventsTest {

    @TempDir
    Path dir;

    @Test
    void aRecordingShowsTasksFetchesSpillsAndRestores() throws Exception {
        Path file = dir.resolve("job.jfr");
        long objectBytes = 1L << 20;
        int objects = 12; // 12 MiB made on node 0 with an 8 MiB store: some spill
        try (Recording recording = new Recording()) {
            for (String e : List.of("dev.croupier.Task", "dev.croupier.Fetch", "dev.croupier.Spill", "dev.croupier.Restore")) {
                recording.enable(e);
            }
            recording.start();
            // serializing: embedded nodes otherwise read each other's objects in place, and a fetch
            // (a copy between stores, as between node processes) is what this recording must show
            try (Cluster c = TestClusters.small(2, dir.resolve("spill")).serializing(true).start()) {
                List<ObjectRef<MemorySegment>> made = new ArrayList<>();
                for (int i = 0; i < objects; i++) {
                    made.add(c.task((Long n) -> {
                        MemorySegment out = TaskOutput.allocate(n);
                        out.fill((byte) 5);
                        return out;
                    }, objectBytes).name("make").onNode(0, Affinity.HARD).remote());
                }
                c.wait(made, made.size(), java.time.Duration.ofSeconds(60));
                long onOne = c.task((MemorySegment s) -> s.byteSize(), made.getLast()).name("read-remote")
                        .onNode(1, Affinity.HARD).remote().get();
                assertEquals(objectBytes, onOne);
                long sum = 0;
                for (ObjectRef<MemorySegment> r : made) { // the early ones were spilled: read back here
                    sum += c.task((MemorySegment s) -> (long) s.get(ValueLayout.JAVA_BYTE, 0), r).name("read-local")
                            .onNode(0, Affinity.HARD).remote().get();
                }
                assertEquals(5L * objects, sum);
            }
            recording.stop();
            recording.dump(file);
        }
        Map<String, List<RecordedEvent>> byType = RecordingFile.readAllEvents(file).stream()
                .collect(Collectors.groupingBy(e -> e.getEventType().getName()));

        List<RecordedEvent> tasks = byType.getOrDefault("dev.croupier.Task", List.of());
        assertEquals(objects, tasks.stream().filter(e -> e.getString("task").equals("make")).count(), "one per attempt");
        assertTrue(tasks.stream().filter(e -> e.getString("task").equals("make"))
                .allMatch(e -> e.getString("outcome").equals("COMPLETED") && e.getInt("node") == 0
                        && e.getLong("bytesOut") >= objectBytes), "name, node, outcome and output size");
        assertEquals(objects + 1, tasks.stream().filter(e -> e.getString("task").startsWith("read")).count());

        List<RecordedEvent> fetches = byType.getOrDefault("dev.croupier.Fetch", List.of());
        assertEquals(1, fetches.size(), "node 1 fetched one object");
        assertTrue(fetches.getFirst().getLong("bytes") >= objectBytes && fetches.getFirst().getInt("node") == 1
                && fetches.getFirst().getInt("source") == 0, fetches.toString());

        long spilled = byType.getOrDefault("dev.croupier.Spill", List.of()).stream().mapToLong(e -> e.getLong("bytes")).sum();
        long restored = byType.getOrDefault("dev.croupier.Restore", List.of()).stream().mapToLong(e -> e.getLong("bytes")).sum();
        assertTrue(spilled >= objectBytes, "spill writes recorded: " + spilled);
        assertTrue(restored >= objectBytes, "restores recorded: " + restored);
    }
}
