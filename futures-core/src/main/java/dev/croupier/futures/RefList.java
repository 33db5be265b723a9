package dev.croupier.futures;

import java.util.List;

/**
 * A task argument made of many refs, made with {@link ObjectRef#all}: the task receives the
 * {@code List} of their values, in order. Immutable.
 */
public record RefList<T>(List<ObjectRef<T>> refs) {
    public RefList {
        refs = List.copyOf(refs);
    }
}
