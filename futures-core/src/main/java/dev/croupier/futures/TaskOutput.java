package dev.croupier.futures;

import dev.croupier.futures.internal.OutputScope;
import java.lang.foreign.MemorySegment;

/**
 * Memory for a task's output that becomes the stored object without a copy.
 *
 * <p>Inside a task, {@link #allocate(long)} takes the bytes from the object store of the node
 * that runs the task. If the task then returns that very segment (whole; as its value, or as one
 * element of the list of a {@link TaskBuilder#numReturns(int) numReturns} task), the runtime
 * seals it in place as the output object, so every byte is written once, by the task. Memory a
 * task allocates but does not return is freed when the task ends, also when it fails. This is
 * how block kernels (partition, merge, sort) avoid a heap buffer and a copy per stage.
 *
 * <pre>{@code
 * cluster.task((MemorySegment in) -> {
 *     MemorySegment out = TaskOutput.allocate(in.byteSize());
 *     transform(in, out);
 *     return out;                 // stored as is, no copy
 * }, inputRef).remote();
 * }</pre>
 *
 * <p>Outside a task, or for fewer bytes than the cluster keeps on the heap, it returns plain
 * memory that is copied when stored, like any other segment. An allocation may wait while the
 * store spills to make room. Thread-safety: call it on the task's own thread; the segment may
 * be filled by threads the task starts, but nobody may use it after the task returns.
 */
public final class TaskOutput {

    private TaskOutput() {}

    /**
     * Returns {@code bytes} of writable off-heap memory, 8-byte aligned; its contents are
     * unspecified until written.
     *
     * @param bytes size, at least 0
     * @return the writable segment
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public static MemorySegment allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes = " + bytes + " must be >= 0");
        }
        return OutputScope.allocate(bytes);
    }
}
