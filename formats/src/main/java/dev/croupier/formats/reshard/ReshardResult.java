package dev.croupier.formats.reshard;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * What a reshard job did (or, for a dry run, would do).
 *
 * <p>Thread-safety: immutable.
 *
 * @param dryRun whether nothing was written
 * @param outputs the output shards in order (planned ones for a dry run)
 * @param extraction extraction phase metrics
 * @param sorting sorting phase metrics
 * @param creation creation phase metrics (zero for a dry run)
 * @param shuffleSeed the seed the shuffle used (the spec's or the clock's), or -1 when not shuffling
 * @param warnings one line per warning (missing or skipped shard, duplicate file)
 * @param skippedShards input shards skipped with {@code --on-error=skip}
 */
public record ReshardResult(boolean dryRun, List<OutputShard> outputs, Phase extraction, Phase sorting,
                            Phase creation, long shuffleSeed, List<String> warnings, List<Path> skippedShards) {

    /** Copies the lists. */
    public ReshardResult {
        outputs = List.copyOf(outputs);
        warnings = List.copyOf(warnings);
        skippedShards = List.copyOf(skippedShards);
    }

    /**
     * One output shard.
     *
     * @param path its final name
     * @param records records in it (after the transform)
     * @param contentBytes content bytes of those records
     * @param fileBytes size of the shard file, or -1 for a dry run
     */
    public record OutputShard(Path path, long records, long contentBytes, long fileBytes) {
    }

    /**
     * Metrics of one phase.
     *
     * @param shards shards read (extraction) or written (creation)
     * @param records records handled
     * @param bytes content bytes handled
     * @param elapsed wall time
     * @param memoryBytes extracted bytes held in memory at the end of extraction
     * @param spilledBytes extracted bytes spilled to the work folder
     */
    public record Phase(long shards, long records, long bytes, Duration elapsed, long memoryBytes, long spilledBytes) {
        /** A phase that did not run. */
        public static final Phase NONE = new Phase(0, 0, 0, Duration.ZERO, 0, 0);
    }
}
