package dev.croupier.examples.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.examples.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code croupier aggregate} in-process: a partial answer per round, the last one the batch answer. */
@Timeout(120)
class AggregateCommandTest {

    @TempDir
    Path dir;

    @Test
    void partialAnswersGrowRoundByRoundAndEndAtTheBatchAnswer() throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = new AggregateCommand().run(new String[] {"--records", "20000", "--keys", "300", "--blocks", "5",
                    "--maps-per-round", "2", "--partitions", "3", "--top", "2", "--batch-strategy", "magnet", "--json",
                    "--nodes", "2", "--store-memory", "32m", "--spill-dir", dir.toString()});
        } finally {
            System.setOut(old);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, text);
        JsonNode report = new ObjectMapper().readTree(text);
        assertTrue(report.get("final_equals_batch").asBoolean());
        JsonNode rounds = report.get("rounds");
        assertEquals(3, rounds.size(), "5 blocks, 2 per round");
        long previous = 0;
        for (JsonNode round : rounds) {
            long partial = round.get("partial_total").asLong();
            assertTrue(partial > previous, "views only add up");
            previous = partial;
        }
        assertEquals(5, rounds.get(2).get("maps_done").asInt());
        assertEquals(report.get("final_total").asLong(), previous, "the last partial answer is the final one");
        assertEquals(report.get("final_top"), rounds.get(2).get("top"));
        assertEquals(2, report.get("final_top").size());
    }

    @Test
    void badOptionsAreUsageErrorsNamingTheOption() {
        UsageException e = assertThrows(UsageException.class,
                () -> new AggregateCommand().run(new String[] {"--batch-strategy", "streaming"}));
        assertTrue(e.getMessage().contains("--batch-strategy"), e.getMessage());
        e = assertThrows(UsageException.class, () -> new AggregateCommand().run(new String[] {"--keys", "-1"}));
        assertTrue(e.getMessage().contains("--keys"), e.getMessage());
    }
}
