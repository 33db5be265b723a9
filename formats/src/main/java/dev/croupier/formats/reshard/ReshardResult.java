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
     * The summary as one JSON object (what {@code --json} prints): phases, output shards with
     * their sizes, warnings and skipped shards. Durations are in milliseconds.
     *
     * @return the JSON text
     */
    public String toJson() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("dry_run", dryRun);
        m.put("extraction", phase(extraction));
        m.put("sorting", phase(sorting));
        m.put("creation", phase(creation));
        if (shuffleSeed >= 0) {
            m.put("shuffle_seed", Long.toString(shuffleSeed));
        }
        List<Object> out = new java.util.ArrayList<>();
        for (OutputShard o : outputs) {
            java.util.Map<String, Object> s = new java.util.LinkedHashMap<>();
            s.put("path", o.path().toString());
            s.put("records", o.records());
            s.put("content_bytes", o.contentBytes());
            s.put("file_bytes", o.fileBytes());
            out.add(s);
        }
        m.put("outputs", out);
        m.put("warnings", warnings);
        m.put("skipped_shards", skippedShards.stream().map(Path::toString).toList());
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(m);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a map of strings and numbers always serialises", e);
        }
    }

    private static java.util.Map<String, Object> phase(Phase p) {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("shards", p.shards());
        m.put("records", p.records());
        m.put("bytes", p.bytes());
        m.put("elapsed_ms", p.elapsed().toMillis());
        m.put("memory_bytes", p.memoryBytes());
        m.put("spilled_bytes", p.spilledBytes());
        return m;
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
     * @param shards shards read (extraction) or written (creation); for sorting, the metadata
     *     sort's partitions in a distributed job (0 in a single process)
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
