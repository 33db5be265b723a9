package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code croupier sample} in-process: the JSON report's keys, and errors that name the value. */
@Timeout(60)
class SampleCommandTest {

    @TempDir
    Path dir;

    private JsonNode sampleJson(String... extra) throws Exception {
        Path file = dir.resolve("rows.bin");
        Files.write(file, new byte[512 * 2048]);
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            String[] base = {file.toString(), "--row-size", "512", "--batch", "64", "--threads", "2", "--seconds", "0.2",
                    "--memory-limit", "8m", "--json"};
            String[] args = java.util.Arrays.copyOf(base, base.length + extra.length);
            System.arraycopy(extra, 0, args, base.length, extra.length);
            code = new SampleCommand().run(args);
        } finally {
            System.setOut(old);
        }
        assertEquals(0, code);
        return new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void jsonReportHasTheIssuesKeys() throws Exception {
        JsonNode report = sampleJson();
        assertTrue(report.get("samples_per_s").asDouble() > 0, report.toString());
        assertTrue(report.get("gib_per_s").asDouble() > 0, report.toString());
        assertTrue(report.has("page_cache_added_bytes"), report.toString());
    }

    @Test
    void theIoEngineCanBeChosenAndIsReported() throws Exception {
        assertEquals("threads", sampleJson("--io-engine", "threads").get("io_engine").asText());
        Path file = dir.resolve("rows.bin");
        Exception e = assertThrows(UsageException.class, () -> new SampleCommand().run(new String[] {file.toString(),
                "--row-size", "512", "--batch", "4", "--io-engine", "uring"}));
        assertTrue(e.getMessage().contains("--io-engine 'uring'"), e.getMessage());
    }

    @Test
    void badValuesAreNamed() throws Exception {
        Path file = dir.resolve("odd.bin");
        Files.write(file, new byte[1000]);
        Exception e = assertThrows(Exception.class,
                () -> new SampleCommand().run(new String[] {file.toString(), "--row-size", "512", "--batch", "4"}));
        assertTrue(e.getMessage().contains("1000") && e.getMessage().contains("--row-size = 512"), e.getMessage());
        e = assertThrows(UsageException.class,
                () -> new SampleCommand().run(new String[] {file.toString(), "--batch", "4"}));
        assertTrue(e.getMessage().contains("--row-size"), e.getMessage());
        e = assertThrows(UsageException.class, () -> new SampleCommand().run(new String[] {file.toString(),
                "--row-size", "100", "--batch", "4", "--row-count", "11"}));
        assertTrue(e.getMessage().startsWith("--row-count = 11 rows of 100 bytes is more than "), e.getMessage());
    }
}
