package dev.croupier.futures;

/**
 * An object is on no live node and has no lineage to rebuild it from: it was made by
 * {@link Cluster#put}. Objects made by tasks are rebuilt instead.
 */
public class ObjectLostException extends CroupierException {
    private static final long serialVersionUID = 1L;

    public ObjectLostException(String message) {
        super(ErrorCode.OBJECT_LOST, message);
    }
}
