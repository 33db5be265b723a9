package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.ObjectRef;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every batch strategy on 3 node processes sorts exactly as the sequential reference and as
 * the embedded cluster does, with maps that pack or not, and frees every intermediate object
 * on the nodes.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ProcessClusterStrategyTest {

    @TempDir
    static Path spill;
    private static Cluster processes;

    @BeforeAll
    static void start() {
        processes = Cluster.builder().processes(3).cpusPerNode(2).objectStoreBytes(16L << 20)
                .spillDirectory(spill).start();
    }

    @AfterAll
    static void stop() {
        processes.close();
    }

    @ParameterizedTest
    @EnumSource(value = Strategy.class, names = {"SIMPLE", "RIFFLE", "MAGNET", "PUSH_PIPELINED", "AUTO"})
    void everyStrategyOnProcessesGivesTheEmbeddedAnswer(Strategy strategy) {
        for (long seed = 1; seed <= 3; seed++) {
            long[][] inputs = ShuffleStrategyProperties.randomInputs(seed * 31 + strategy.ordinal(), 9, 400);
            boolean packed = seed % 2 == 0;
            long[] onProcesses = sort(processes, inputs, strategy, packed);
            long[] embedded;
            try (Cluster c = ShuffleStrategyProperties.cluster(3, spill)) {
                embedded = sort(c, inputs, strategy, packed);
            }
            assertArrayEquals(ShuffleStrategyProperties.sortedAll(inputs), onProcesses, strategy.toString());
            assertArrayEquals(embedded, onProcesses, strategy.toString());
            assertEquals(0, processes.objectCount(), "every intermediate object is freed");
        }
    }

    /** With {@code packed}, the maps pack ({@link LongBlocks.RangePacks}): packs and their parts travel between processes. */
    private static long[] sort(Cluster cluster, long[][] inputs, Strategy strategy, boolean packed) {
        List<ObjectRef<MemorySegment>> refs = new ArrayList<>();
        try (ShuffleResult<MemorySegment> result = ShuffleStrategyProperties.sortJob(cluster, inputs, 5, strategy, refs,
                packed ? "processes" : null).build().run(cluster)) {
            return LongBlocks.concat(result.values());
        } finally {
            refs.forEach(ObjectRef::release);
        }
    }
}
