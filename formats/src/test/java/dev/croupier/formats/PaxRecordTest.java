package dev.croupier.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** A pax record's length prefix counts the whole record, its own digits included. */
class PaxRecordTest {
    @Test
    void lengthPrefixCountsItself() {
        for (int n = 0; n < 2000; n++) {
            String value = "\u00e9".repeat(n % 3) + "x".repeat(n);
            String record = TarShardWriter.paxRecord("path", value);
            int declared = Integer.parseInt(record.substring(0, record.indexOf(' ')));
            assertEquals(record.getBytes(StandardCharsets.UTF_8).length, declared, "value length " + n);
        }
    }
}
