package dev.croupier.futures.internal;

import dev.croupier.futures.TaskCancelledException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The output memory of the task running on this thread: what {@code TaskOutput.allocate} took
 * from the node's store and the task has not yet returned.
 *
 * <p>Design: a scope is opened around the user's function by the attempt runner and bound to
 * the thread, the way Ray's workers give a task a place to create its return objects. A
 * returned segment is matched by address and size against this list, then sealed in place;
 * whatever is left when the scope closes is aborted, so a failed or interrupted task leaks
 * nothing. Scopes nest (a task may run inside a {@code get} of another on the same thread):
 * closing one restores the outer one. Confined to its thread.
 */
public final class OutputScope implements AutoCloseable {

    private static final ThreadLocal<OutputScope> CURRENT = new ThreadLocal<>();

    private final NodeStore store;
    private final OutputScope outer;
    private final List<NodeStore.Scratch> pending = new ArrayList<>(4);

    private OutputScope(NodeStore store, OutputScope outer) {
        this.store = store;
        this.outer = outer;
    }

    static OutputScope open(NodeStore store) {
        OutputScope scope = new OutputScope(store, CURRENT.get());
        CURRENT.set(scope);
        return scope;
    }

    /** Store memory inside a task (above the small-object size), plain off-heap memory otherwise. */
    public static MemorySegment allocate(long bytes) {
        OutputScope scope = CURRENT.get();
        if (scope == null || !scope.store.isStored(bytes + ValueFrame.HEADER_BYTES)) {
            return Arena.ofAuto().allocate(Math.max(bytes, 1), Long.BYTES).asSlice(0, bytes);
        }
        NodeStore.Scratch scratch;
        try {
            scratch = scope.store.allocateScratch(bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskCancelledException("interrupted while waiting for "
                    + bytes + " bytes of output memory");
        }
        scope.pending.add(scratch);
        return scratch.payload();
    }

    /** The pending allocation {@code value} is exactly, now handed over to the caller; or null. */
    NodeStore.Scratch take(Object value) {
        if (!(value instanceof MemorySegment segment) || !segment.isNative() || pending.isEmpty()) {
            return null;
        }
        for (int i = 0; i < pending.size(); i++) {
            MemorySegment payload = pending.get(i).payload();
            if (payload.address() == segment.address() && payload.byteSize() == segment.byteSize()) {
                return pending.remove(i);
            }
        }
        return null;
    }

    @Override
    public void close() {
        CURRENT.set(outer);
        if (outer == null) {
            CURRENT.remove();
        }
        pending.forEach(NodeStore.Scratch::abort);
        pending.clear();
    }
}
