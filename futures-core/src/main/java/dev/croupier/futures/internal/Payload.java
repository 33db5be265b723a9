package dev.croupier.futures.internal;

import java.lang.foreign.MemorySegment;

/**
 * A task function or plain argument as the node protocol carries it: encoded as a value frame
 * when it crosses a process boundary (or the embedded backend's serializing mode), or the
 * object itself where owner and node share a heap.
 *
 * <p>Design: the owner encodes once, at submission, so a function or argument that cannot
 * travel is refused there, naming the class; the node decodes on the worker that runs the
 * attempt, with its session's codecs and allow-list. Immutable.
 */
sealed interface Payload {

    /**
     * The function or argument, decoded if it is encoded. Both are part of the task's code, as
     * what a lambda captures is: they are read with the allow-list for code, which adds lambdas
     * and Croupier's own classes to the values' ({@link ValueCodecs#decodeCode}).
     */
    Object open(ValueCodecs codecs);

    /** Shared by reference: owner and node are one JVM. */
    record Live(Object value) implements Payload {
        @Override
        public Object open(ValueCodecs codecs) {
            return value;
        }
    }

    /**
     * A value frame ({@link ValueFrame}) as the wire carries it.
     *
     * @param stateless a function whose body captures nothing: equal bytes decode to
     *     interchangeable objects, so a node may reuse one
     */
    record Encoded(byte[] frame, boolean stateless) implements Payload {
        @Override
        public Object open(ValueCodecs codecs) {
            return codecs.decodeCode(MemorySegment.ofArray(frame));
        }
    }
}
