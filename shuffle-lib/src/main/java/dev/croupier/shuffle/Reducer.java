package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/** Turns every block of one partition into that partition's output. Runs as a task. */
@FunctionalInterface
public interface Reducer<B, O> extends Serializable {
    O reduce(int partition, List<B> blocks) throws Exception;
}
