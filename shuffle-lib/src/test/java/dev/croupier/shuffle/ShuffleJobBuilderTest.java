package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ShuffleJobBuilderTest {

    private static ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> valid() {
        return ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                .source(2, i -> LongBlocks.of(i))
                .mapper(LongBlocks::rangeMap)
                .reducer(LongBlocks::sortBlocks)
                .partitions(2);
    }

    private static void assertNames(String knob, Runnable build) {
        CroupierException e = assertThrows(CroupierException.class, build::run);
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains(knob), e.getMessage());
    }

    @Test
    void everyBadKnobIsNamed() {
        assertNames("partitions = 0", () -> valid().partitions(0).build());
        assertNames("mapper", () -> valid().mapper(null).build());
        assertNames("reducer", () -> valid().reducer(null).build());
        assertNames("merger", () -> valid().strategy(Strategy.MAGNET).build());
        assertNames("streamingReducer", () -> valid().strategy(Strategy.STREAMING).build());
        assertNames("mergeFactor = 1", () -> valid().mergeFactor(1).build());
        assertNames("outputBytes = -1", () -> valid().outputBytes(-1).build());
        assertNames("speculateAfter", () -> valid().speculateAfter(Duration.ofSeconds(-1)).build());
        assertNames("splitPartitionsAbove", () -> valid().splitPartitionsAbove(100, null).build());
        assertNames("mappers = 0", () -> valid().source(0, i -> LongBlocks.of()).build());
        assertNames("inputs/source", () -> ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                .mapper(LongBlocks::rangeMap).reducer(LongBlocks::sortBlocks).partitions(1).build());
        assertNames("positionedReducer", () -> valid().strategy(Strategy.STREAMING)
                .streamingReducer((p, state, blocks) -> state)
                .positionedReducer(MemorySegment::byteSize, (p, position, blocks) -> blocks.getFirst()).build());
        assertNames("splitPartitionsAbove = 100 is not allowed; needs 0 with Strategy.STREAMING", () -> valid()
                .strategy(Strategy.STREAMING).streamingReducer((p, state, blocks) -> state)
                .splitPartitionsAbove(100, (p, block, ways) -> java.util.List.of(block)).build());
        assertNames("splitPartitionsAbove = 100", () -> valid()
                .positionedReducer(MemorySegment::byteSize, (p, position, blocks) -> blocks.getFirst())
                .splitPartitionsAbove(100, (p, block, ways) -> java.util.List.of(block)).build());
    }

    /**
     * AUTO runs SIMPLE while the map outputs and the reduce outputs the stores keep fit in three
     * quarters of their memory, PUSH_PIPELINED beyond; outputs written elsewhere
     * ({@code outputBytes(0)}) do not count. Two nodes of 64 MiB: 96 MiB may be held.
     */
    @Test
    void autoRunsSimpleWhileWhatTheStoresHoldFitsInThreeQuartersOfThem() {
        try (Cluster c = Cluster.builder().nodes(2).objectStoreBytes(64L << 20).start()) {
            assertEquals(Strategy.SIMPLE, chosen(c, valid().inputBytes(48L << 20)), "48 MiB in, 48 kept out");
            assertEquals(Strategy.PUSH_PIPELINED, chosen(c, valid().inputBytes((48L << 20) + 1)));
            assertEquals(Strategy.SIMPLE, chosen(c, valid().inputBytes(96L << 20).outputBytes(0)), "outputs in a file");
            assertEquals(Strategy.PUSH_PIPELINED, chosen(c, valid().inputBytes((96L << 20) + 1).outputBytes(0)));
            assertEquals(Strategy.PUSH_PIPELINED, chosen(c, valid().inputBytes(16L << 20).outputBytes(81L << 20)));
        }
    }

    private static Strategy chosen(Cluster c, ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> job) {
        try (ShuffleResult<MemorySegment> r = job.merger(LongBlocks::mergeBlocks).build().run(c)) {
            r.outputs().forEach(o -> o.ref().get()); // every strategy gives the same outputs; the choice is the point
            return r.strategy();
        }
    }
}
