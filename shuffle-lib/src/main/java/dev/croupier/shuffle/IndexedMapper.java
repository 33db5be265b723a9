package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * A {@link Mapper} that is told which map task runs it: {@code mapIndex} is the index of its
 * input (in {@code inputs(...)} or {@code source(...)}). For jobs whose output depends on where a
 * record came from: per-input random seeds, keeping each input in its own partition. Runs as a
 * task; must be deterministic (lineage reconstruction and speculation re-run it).
 */
@FunctionalInterface
public interface IndexedMapper<I, B> extends Serializable {
    List<B> map(int mapIndex, I input, int partitions) throws Exception;
}
