package dev.croupier.futures;

import java.io.Serializable;

/**
 * A task body with 4 arguments, submitted with {@link Cluster#task}.
 *
 * <p>Serializable so that a process cluster can ship it to a node; on the embedded cluster it
 * runs as it is. An {@link ObjectRef} passed in an argument's place arrives here as its value.
 */
@FunctionalInterface
public interface Fn4<A, B, C, D, R> extends Serializable {
    /** Runs the task; an exception reaches callers of {@code get} as a {@link TaskFailedException}. */
    R apply(A a1, B a2, C a3, D a4) throws Exception;
}
