package dev.croupier.futures;

/**
 * A task threw, or the node running it died more often than its retries allow. The message
 * names the task and the node; {@link #getCause()} is the task's own exception. Tasks that
 * depend on the failed one fail with this same exception without running.
 */
public class TaskFailedException extends CroupierException {
    private static final long serialVersionUID = 1L;

    private final String taskName;
    private final int nodeId;

    public TaskFailedException(String taskName, int nodeId, String message, Throwable cause) {
        super(ErrorCode.TASK_FAILED, message, cause);
        this.taskName = taskName;
        this.nodeId = nodeId;
    }

    /** The name of the task that failed (its {@code name(...)} or its function's class). */
    public String taskName() {
        return taskName;
    }

    /** The node the task last ran on, or -1 if it never started. */
    public int nodeId() {
        return nodeId;
    }
}
