package dev.croupier.shuffle;

import java.io.Serializable;
import java.util.List;

/**
 * Combines blocks of one partition into one block (a pre-shuffle or push merge). Merging must
 * not change what the reducer computes: {@code reduce(p, [merge(a, b), c]) == reduce(p, [a, b, c])}.
 */
@FunctionalInterface
public interface Merger<B> extends Serializable {
    B merge(int partition, List<B> blocks) throws Exception;
}
