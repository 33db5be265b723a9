package dev.croupier.formats.reshard;

/**
 * Receives progress as shards finish, for a terminal progress bar or JSON progress lines:
 * extraction counts input shards read, creation counts output shards written (dSort's progress
 * measures); the distributed job also reports sorting, counting sorted metadata partitions
 * (a single process has no sorting steps to count).
 *
 * <p>Thread-safety: called concurrently from the job's worker threads; implementations must be
 * thread-safe. Calls of one phase may arrive out of order ({@code done} 3 before 2).
 */
@FunctionalInterface
public interface ReshardProgress {
    /** Reports nothing. */
    ReshardProgress NONE = (phase, done, total) -> { };

    /**
     * @param phase {@code extraction}, {@code sorting} (distributed job only) or {@code creation}
     * @param done shards finished so far in this phase
     * @param total shards in this phase
     */
    void update(String phase, long done, long total);
}
