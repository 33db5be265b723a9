package dev.croupier.shuffle.records;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
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
 *   count i:   records of input i         (tiny tasks; the driver adds them up)
 *   map i:     records of input i to the outputs their global positions fall in
 *   reduce p:  concatenate its blocks in input order
 * </pre>
 *
 * It always runs the SIMPLE strategy: a reducer gets its blocks in input order only when no
 * merge regroups them, and order is this job's promise. Immutable; {@link #run} may be called
 * more than once.
 */
public final class RepartitionJob {

    private final RecordLayout layout;
    private final List<ObjectRef<MemorySegment>> inputs;
    private final int partitions;
    private final String name;

    private RepartitionJob(Builder b) {
        this.layout = b.layout;
        this.inputs = b.inputs;
        this.partitions = b.partitions;
        this.name = b.name;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Counts the inputs' records, then submits the shuffle; returns when every reduce task is submitted. */
    public ShuffleResult<MemorySegment> run(Cluster cluster) {
        RecordLayout layout = this.layout;
        List<ObjectRef<Long>> counts = new ArrayList<>(inputs.size());
        for (ObjectRef<MemorySegment> in : inputs) {
            counts.add(cluster.task((MemorySegment block) -> layout.records(block.byteSize()), in)
                    .name(name + "-count").remote());
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
                .indexedMapper((int i, MemorySegment in, int r) -> {
                    int records = Math.toIntExact(layout.records(in.byteSize()));
                    int[] partitionOf = new int[records];
                    for (int k = 0; k < records; k++) {
                        partitionOf[k] = outputOf(firstRecord[i] + k, total, n);
                    }
                    return RecordKernels.scatter(layout, in, partitionOf, r);
                })
                .reducer((int p, List<MemorySegment> blocks) -> RecordKernels.concat(blocks))
                .partitions(n)
                .strategy(Strategy.SIMPLE)
                .build()
                .run(cluster);
    }

    /**
     * The output holding global record {@code g}: the largest p with floor(p * total / n) <= g,
     * which is floor(((g + 1) * n - 1) / total).
     */
    static int outputOf(long g, long total, int n) {
        return (int) ((Math.multiplyExact(g + 1, (long) n) - 1) / total);
    }

    /** Settings of a repartition, checked by {@link #build()}. Not thread-safe. */
    public static final class Builder {
        private RecordLayout layout = RecordLayout.SORT_BENCHMARK;
        private List<ObjectRef<MemorySegment>> inputs;
        private int partitions;
        private String name = "repartition";

        private Builder() {}

        /** Record size (default: 100-byte Sort Benchmark records). */
        public Builder layout(RecordLayout layout) {
            this.layout = Objects.requireNonNull(layout, "layout");
            return this;
        }

        /** The blocks to cut, in order. */
        public Builder inputs(List<? extends ObjectRef<MemorySegment>> inputs) {
            this.inputs = List.copyOf(inputs);
            return this;
        }

        /** Number of output blocks N (required). */
        public Builder partitions(int partitions) {
            this.partitions = partitions;
            return this;
        }

        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public RepartitionJob build() {
            if (inputs == null || inputs.isEmpty()) {
                throw bad("inputs", inputs == null ? "unset" : "empty", "at least one block");
            }
            if (partitions < 1 || partitions > 1_000_000) {
                throw bad("partitions", partitions, "1..1000000");
            }
            return new RepartitionJob(this);
        }

        private static CroupierException bad(String knob, Object value, String allowed) {
            return new CroupierException(ErrorCode.BAD_INPUT,
                    "RepartitionJob.Builder." + knob + " = " + value + " is not allowed; needs " + allowed);
        }
    }
}
