package dev.croupier.shuffle.records;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.SegmentPackMapper;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Cuts the records of M input blocks into N output blocks of near-equal size (they differ by at
 * most one record), keeping the records' order: output {@code p} holds records
 * {@code [p * total / N, (p + 1) * total / N)} of the inputs taken in order.
 *
 * <pre>
 *   count i:   records of input i          (tiny tasks; the driver adds them up)
 *   map i:     records of input i to the outputs their positions fall in   (one tagged run per output)
 *   [merge]:   concatenate run blocks      (RIFFLE, MAGNET, PUSH_PIPELINED)
 *   reduce p:  its runs in input order     (one block)
 * </pre>
 *
 * Any strategy keeps the order: map outputs are {@link RunFrame} runs tagged with their input's
 * index, and a reducer concatenates its runs sorted by it, however merges grouped them.
 * Immutable; {@link #run} may be called more than once.
 */
public final class RepartitionJob {

    private final RecordLayout layout;
    private final List<ObjectRef<MemorySegment>> inputs;
    private final int partitions;
    private final Strategy strategy;
    private final String name;

    private RepartitionJob(Builder b) {
        this.layout = b.layout;
        this.inputs = b.inputs;
        this.partitions = b.partitions;
        this.strategy = b.strategy;
        this.name = b.name;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Counts the inputs' records, then submits the shuffle; returns when every reduce task is submitted. */
    public ShuffleResult<MemorySegment> run(Cluster cluster) {
        RecordLayout layout = this.layout;
        List<ObjectRef<Long>> counts = new ArrayList<>(inputs.size());
        for (int i = 0; i < inputs.size(); i++) {
            int input = i;
            counts.add(cluster.task((MemorySegment block) -> {
                if (block.byteSize() % layout.recordBytes() != 0) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, "input " + input + ": a block of " + block.byteSize()
                            + " bytes is not a whole number of " + layout.recordBytes() + "-byte records");
                }
                return block.byteSize() / layout.recordBytes();
            }, inputs.get(i)).name(name + "-count").remote());
        }
        long[] firstRecord = new long[inputs.size() + 1];
        for (int i = 0; i < counts.size(); i++) {
            try (ObjectRef<Long> count = counts.get(i)) {
                firstRecord[i + 1] = firstRecord[i] + count.get();
            }
        }
        long total = firstRecord[inputs.size()];
        int n = partitions;
        return ShuffleJob.<MemorySegment, MemorySegment, MemorySegment>builder()
                .name(name)
                .inputs(inputs)
                .packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) ->
                        RunKernels.scatterByPosition(layout, i, in, firstRecord[i], total, r, packs))
                .merger((int p, List<MemorySegment> blocks) -> RecordKernels.concat(blocks))
                .reducer((int p, List<MemorySegment> blocks) -> RunKernels.concatInOrder(layout, blocks, p))
                .partitions(n)
                .strategy(strategy)
                .build()
                .run(cluster);
    }

    /** Settings of a repartition (partitions required: the N of the output), checked by {@link #build()}. Not thread-safe. */
    public static final class Builder extends RecordJobBuilder<Builder> {
        private RecordLayout layout = RecordLayout.SORT_BENCHMARK;

        private Builder() {
            super("RepartitionJob", "repartition");
        }

        /** Record size (default: 100-byte Sort Benchmark records). */
        public Builder layout(RecordLayout layout) {
            this.layout = Objects.requireNonNull(layout, "layout");
            return this;
        }

        public RepartitionJob build() {
            requireInputs();
            if (partitions < 1 || partitions > 1_000_000) {
                throw bad("partitions", partitions, "1..1000000");
            }
            return new RepartitionJob(this);
        }
    }
}
