package dev.croupier.formats.reshard;

/**
 * A reshard job that failed, with a small set of typed causes. The message names the shard,
 * record or template at fault. Corrupt input shards surface as
 * {@link dev.croupier.formats.BadShardException} in the cause chain.
 *
 * <p>Thread-safety: immutable.
 */
public final class ReshardException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why the job failed. */
    public enum Kind {
        /** Input shards named by the spec do not exist and {@code missing_shards} is abort. */
        MISSING_SHARDS,
        /** An input shard is corrupt or unsafe (and {@code --on-error} is abort). */
        BAD_SHARD,
        /** The output template has fewer names than the shards needed. */
        OUT_OF_NAMES,
        /** A record lacks the file holding its content key, or the key does not parse. */
        CONTENT_KEY,
        /** Reading, writing or renaming failed. */
        IO,
        /** The user transform threw. */
        TRANSFORM
    }

    private final Kind kind;

    /**
     * @param kind why the job failed
     * @param message what failed, naming the shard, record or template
     */
    public ReshardException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /**
     * @param kind why the job failed
     * @param message what failed
     * @param cause the underlying error
     */
    public ReshardException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** @return why the job failed */
    public Kind kind() {
        return kind;
    }
}
