package dev.croupier.futures;

import java.util.Objects;

/**
 * Root of the runtime's errors: unchecked, with an {@link ErrorCode} and a message that names
 * the task, object, node or setting concerned.
 */
public class CroupierException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public CroupierException(ErrorCode code, String message) {
        this(code, message, null);
    }

    public CroupierException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    /** Why the call failed. */
    public ErrorCode code() {
        return code;
    }
}
