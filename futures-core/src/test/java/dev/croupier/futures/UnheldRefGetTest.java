package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster.task(...).remote().get()} holds the ref only on the stack of its own get: the
 * ref must stay reachable until get returns, or its release drops the last claim while the task
 * runs and get waits for a value that is freed as it is made. Garbage collections run beside
 * the gets, so a missing reachability fence shows within a few hundred.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UnheldRefGetTest {

    @TempDir
    Path spill;

    @Test
    void aGetOfARefNobodyElseHoldsReturns() throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        Thread collector = Thread.ofPlatform().daemon().start(() -> {
            while (running.get()) {
                System.gc();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try (Cluster c = TestClusters.start(4, spill)) {
            ObjectRef<byte[]> big = c.task(() -> new byte[1 << 20]).onNode(2, Affinity.HARD).remote();
            big.get();
            for (int i = 0; i < 1500; i++) {
                assertEquals(1 << 20, c.task((byte[] b) -> b.length, big).remote().get(Duration.ofSeconds(20)));
            }
        } finally {
            running.set(false);
            collector.join();
        }
    }
}
