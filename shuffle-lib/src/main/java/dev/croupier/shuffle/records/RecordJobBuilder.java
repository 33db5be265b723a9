package dev.croupier.shuffle.records;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.Strategy;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * The knobs every job over blocks of records shares: its input blocks, its partitions, its
 * strategy and its name. Each job's builder adds its own and checks them all in
 * {@code build()}, which names a bad knob as {@code Job.Builder.knob} with a
 * {@link CroupierException} of {@link ErrorCode#BAD_INPUT}. Not thread-safe.
 *
 * @param <B> the job's builder, which every setter returns
 */
public abstract class RecordJobBuilder<B extends RecordJobBuilder<B>> {

    /** The input blocks, in order; null until set. */
    protected List<ObjectRef<MemorySegment>> inputs;
    /** Output partitions; 0 (the default) means the job's own default. */
    protected int partitions;
    protected Strategy strategy = Strategy.AUTO;
    protected String name;
    private final String job;

    /**
     * @param job the job's class name, which error messages start with
     * @param name the job's default name
     */
    protected RecordJobBuilder(String job, String name) {
        this.job = job;
        this.name = name;
    }

    /** The blocks of records in the cluster, one map task each, in this order. */
    public B inputs(List<? extends ObjectRef<MemorySegment>> inputs) {
        this.inputs = List.copyOf(inputs);
        return self();
    }

    /** Output partitions: reduce tasks, so output blocks (each job says its default). */
    public B partitions(int partitions) {
        this.partitions = partitions;
        return self();
    }

    /** How blocks travel (default AUTO); every strategy gives the same outputs. */
    public B strategy(Strategy strategy) {
        this.strategy = Objects.requireNonNull(strategy, "strategy");
        return self();
    }

    /** The prefix of the job's task names in stats and errors (default: the job's own). */
    public B name(String name) {
        this.name = Objects.requireNonNull(name, "name");
        return self();
    }

    /** Refuses unset or empty inputs. */
    protected final void requireInputs() {
        if (inputs == null || inputs.isEmpty()) {
            throw bad("inputs", inputs == null ? "unset" : "empty", "at least one block");
        }
    }

    /** Refuses partitions out of 0 (the default) to 1,000,000. */
    protected final void checkPartitions() {
        if (partitions < 0 || partitions > 1_000_000) {
            throw bad("partitions", partitions, "1..1000000");
        }
    }

    /** The error for knob {@code knob} set to {@code value}, saying what it needs. */
    protected final CroupierException bad(String knob, Object value, String allowed) {
        return new CroupierException(ErrorCode.BAD_INPUT,
                job + ".Builder." + knob + " = " + value + " is not allowed; needs " + allowed);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
