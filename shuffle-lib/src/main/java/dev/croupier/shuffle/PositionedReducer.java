package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * A {@link Reducer} that is told where its partition starts in the job's output: {@code position}
 * is the sum, over every map task, of the sizes (by the job's {@link BlockSize}) of its blocks
 * for the partitions below {@code partition}. When a reducer's output is as big as its input (a
 * sort, a shuffle, a repartition), partition {@code r} owns bytes
 * {@code [position, position + its input)} of the concatenated output, so reducers can write
 * one shared file in place, in parallel, with no output object and no gather step.
 *
 * <p>Runs as a task; must be deterministic and idempotent (lineage reconstruction, retries and
 * speculation may run it twice, and both runs must leave the same bytes).
 */
@FunctionalInterface
public interface PositionedReducer<B, O> extends Serializable {
    O reduce(int partition, long position, List<B> blocks) throws Exception;
}
