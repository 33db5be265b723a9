package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * The reducer of {@link Strategy#STREAMING}: folds one round's blocks of a partition into the
 * partition's running state ({@code null} before the first round).
 */
@FunctionalInterface
public interface StreamingReducer<B, O> extends Serializable {
    O update(int partition, O state, List<B> blocks) throws Exception;
}
