package dev.croupier.futures;

import java.util.List;

/**
 * What {@link Cluster#wait} returns: the refs that are done (ready, failed or cancelled), in
 * the order they completed (a task's outputs, which complete together, in the order given),
 * and the others in the order they were given. Immutable.
 */
public record WaitResult<T>(List<ObjectRef<T>> ready, List<ObjectRef<T>> pending) {
    public WaitResult {
        ready = List.copyOf(ready);
        pending = List.copyOf(pending);
    }
}
