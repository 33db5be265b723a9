package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A result released before its outputs are done (or closed, then released again) still reports
 * their bytes: its outputs are released as each is done, not freed unmade.
 */
class ShuffleResultTest {

    @TempDir
    Path spill;

    /** Held by the reducers, which read it as a static field: a task's function is serialized. */
    private static final CountDownLatch REDUCERS_MAY_RUN = new CountDownLatch(1);

    @Test
    void aResultReleasedBeforeItsOutputsAreDoneStillReportsThem() throws Exception {
        long[] values = {5, 999, 1, 500, 250, 750, 0, 42};
        try (Cluster cluster = ShuffleStrategyProperties.cluster(2, spill)) {
            List<ObjectRef<MemorySegment>> inputs = List.of(cluster.put(LongBlocks.of(values)));
            ShuffleResult<MemorySegment> result = ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                    .inputs(inputs)
                    .mapper(LongBlocks::rangeMap)
                    .reducer((int p, List<MemorySegment> blocks) -> {
                        REDUCERS_MAY_RUN.await();
                        return LongBlocks.sortBlocks(p, blocks);
                    })
                    .partitions(2)
                    .strategy(Strategy.SIMPLE)
                    .build().run(cluster);
            result.release();
            result.close(); // released already: nothing more
            REDUCERS_MAY_RUN.countDown();
            // a guard, not a measure: before, stats() waited forever for outputs freed unmade
            List<PhaseStats> stats = CompletableFuture.supplyAsync(result::stats).get(60, TimeUnit.SECONDS);
            PhaseStats reduce = stats.stream().filter(p -> p.name().equals("reduce")).findFirst().orElseThrow();
            assertEquals(2, reduce.tasks());
            assertEquals(8L * values.length + 8 * 2, reduce.bytesOut(), "every reduced value and a frame header per output");
            inputs.forEach(ObjectRef::release);
        }
    }
}
