package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * Splits one input into exactly {@code partitions} blocks, block {@code r} holding the records
 * bound for reducer {@code r}. Runs as a task; must be deterministic (lineage reconstruction
 * re-runs it).
 */
@FunctionalInterface
public interface Mapper<I, B> extends Serializable {
    List<B> map(I input, int partitions) throws Exception;
}
