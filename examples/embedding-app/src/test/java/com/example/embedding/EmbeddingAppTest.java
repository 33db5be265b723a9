package com.example.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The example application's shuffle, in the JVM Surefire starts with no flags: every byte comes
 * out once and the stores spilled. Before the library could run without flags this hung.
 */
class EmbeddingAppTest {

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shufflesThroughSpillingStoresWithoutJvmFlags() {
        List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments();
        assertTrue(flags.stream().noneMatch(f -> f.startsWith("--add-") || f.startsWith("-Dchronicle")),
                "this test must run without the flags Croupier's own build uses: " + flags);

        EmbeddingApp.Result result = EmbeddingApp.shuffle(48);

        assertEquals(48L << 20, result.bytesOut(), result.toString());
        assertEquals(result.sumIn(), result.sumOut(), result.toString());
        assertTrue(result.bytesSpilled() > 0, "8 MiB stores must spill 48 MiB: " + result);
    }
}
