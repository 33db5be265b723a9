package dev.croupier.futures;

/** {@link ObjectRef#get(java.time.Duration)} waited its whole timeout. */
public class GetTimeoutException extends CroupierException {
    private static final long serialVersionUID = 1L;

    public GetTimeoutException(String message) {
        super(ErrorCode.TIMEOUT, message);
    }
}
