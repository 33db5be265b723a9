package com.example.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The example application's shuffle, in the JVM Surefire starts with no flags: every byte comes
 * out once and the stores spilled. Before the library could run without flags this hung. The
 * build runs it twice: on the class path, then with everything on the module path.
 */
class EmbeddingAppTest {

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shufflesThroughSpillingStoresWithoutJvmFlags() {
        // The command line (java.base alone can read it, so the module-path run needs no
        // java.management); Surefire's own module-path options live in an argument file.
        List<String> flags = List.of(ProcessHandle.current().info().arguments().orElseThrow());
        assertTrue(flags.stream().noneMatch(f -> f.startsWith("--add-") || f.startsWith("-Dchronicle")
                        || f.startsWith("--enable-native-access") || f.startsWith("--sun-misc")),
                "this test must run without the flags Croupier's own build uses: " + flags);

        check(EmbeddingApp.shuffle(48, 0));
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shufflesOnNodeProcessesItStarts() {
        check(EmbeddingApp.shuffle(48, 3));
    }

    private static void check(EmbeddingApp.Result result) {
        assertEquals(48L << 20, result.bytesOut(), result.toString());
        assertEquals(result.sumIn(), result.sumOut(), result.toString());
        assertTrue(result.bytesSpilled() > 0, "8 MiB stores must spill 48 MiB: " + result);
    }
}
