package dev.croupier.formats.reshard;

/**
 * Receives progress as shards finish, for a terminal progress bar or JSON progress lines:
 * extraction counts input shards read, creation counts output shards written (dSort's progress
 * measures, without its sorting rounds, which a single process does not have).
 *
 * <p>Thread-safety: called concurrently from the job's worker threads; implementations must be
 * thread-safe. Calls of one phase may arrive out of order ({@code done} 3 before 2).
 */
@FunctionalInterface
public interface ReshardProgress {
    /** Reports nothing. */
    ReshardProgress NONE = (phase, done, total) -> { };

    /**
     * @param phase {@code extraction} or {@code creation}
     * @param done shards finished so far in this phase
     * @param total shards in this phase
     */
    void update(String phase, long done, long total);
}
