package dev.croupier.examples.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.examples.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code croupier loader} in-process: every epoch delivers the dataset in its own order, reproducibly. */
@Timeout(120)
class LoaderCommandTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Runs the command with {@code args} plus a small cluster; returns its JSON report. */
    private JsonNode run(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--json", "--nodes", "2", "--store-memory", "32m", "--spill-dir", dir.toString()));
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = new LoaderCommand().run(all.toArray(String[]::new));
        } finally {
            System.setOut(old);
        }
        assertEquals(0, code, out.toString(StandardCharsets.UTF_8));
        return JSON.readTree(out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void everyEpochDeliversTheDatasetInItsOwnReproducibleOrder() throws Exception {
        JsonNode report = run("--records", "3000", "--blocks", "3", "--partitions", "4", "--epochs", "3", "--seed", "7");
        assertTrue(report.get("valid").asBoolean());
        assertEquals(3, report.get("epochs").size());
        assertEquals(3, report.get("distinct_orders").asInt(), "each epoch reshuffles");
        for (JsonNode epoch : report.get("epochs")) {
            assertEquals(3000, epoch.get("records").asLong());
            assertTrue(epoch.get("valid").asBoolean());
            assertTrue(epoch.get("first_partition_seconds").asDouble() <= epoch.get("seconds").asDouble());
            TreeSet<Integer> partitions = new TreeSet<>();
            epoch.get("completion_order").forEach(p -> partitions.add(p.asInt()));
            assertEquals(new TreeSet<>(List.of(0, 1, 2, 3)), partitions, "every partition consumed once");
        }
        JsonNode again = run("--records", "3000", "--blocks", "3", "--partitions", "4", "--epochs", "3", "--seed", "7",
                "--strategy", "push");
        for (int e = 0; e < 3; e++) {
            assertEquals(report.get("epochs").get(e).get("order_fingerprint"), again.get("epochs").get(e).get("order_fingerprint"),
                    "same seed and epoch, same order, whatever the strategy");
        }
        JsonNode other = run("--records", "3000", "--blocks", "3", "--partitions", "4", "--epochs", "1", "--seed", "8");
        assertNotEquals(report.get("epochs").get(0).get("order_fingerprint"), other.get("epochs").get(0).get("order_fingerprint"));
    }

    @Test
    void aWindowedLoaderStillDeliversEveryRecord() throws Exception {
        JsonNode report = run("--records", "2000", "--blocks", "4", "--epochs", "2", "--window", "50");
        assertTrue(report.get("valid").asBoolean());
        assertEquals(4, report.get("epochs").get(0).get("completion_order").size(), "one output per block");
    }

    @Test
    void badOptionsAreUsageErrorsNamingTheOption() {
        UsageException e = assertThrows(UsageException.class,
                () -> new LoaderCommand().run(new String[] {"--window", "5", "--partitions", "3"}));
        assertTrue(e.getMessage().contains("--partitions"), e.getMessage());
        e = assertThrows(UsageException.class, () -> new LoaderCommand().run(new String[] {"--strategy", "fast"}));
        assertTrue(e.getMessage().contains("--strategy = 'fast'"), e.getMessage());
        e = assertThrows(UsageException.class, () -> new LoaderCommand().run(new String[] {"--records", "0"}));
        assertTrue(e.getMessage().contains("--records"), e.getMessage());
    }
}
