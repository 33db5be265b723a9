package dev.croupier.futures.internal;

import java.io.Serial;

/**
 * Stands for a task's exception that came over the wire but may not be instantiated here (its
 * class is not on the driver's allow-list, or not on its class path): the original class name
 * and message, and the node's stack trace as text. Immutable.
 */
final class RemoteTaskError extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final String className;
    private final String remoteStack;

    RemoteTaskError(String className, String message, String remoteStack) {
        super(message, null, false, false);
        this.className = className;
        this.remoteStack = remoteStack;
    }

    /** The class of the exception the task threw. */
    String className() {
        return className;
    }

    /** The stack trace as the node printed it. */
    String remoteStack() {
        return remoteStack;
    }

    @Override
    public String toString() {
        String message = getMessage();
        return message == null ? className : className + ": " + message;
    }
}
