package dev.croupier.futures;

/** The task that makes an object was cancelled, or one it depends on was. */
public class TaskCancelledException extends CroupierException {
    private static final long serialVersionUID = 1L;

    public TaskCancelledException(String message) {
        super(ErrorCode.CANCELLED, message);
    }
}
