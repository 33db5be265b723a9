package dev.croupier.examples.reshard;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.croupier.examples.ClusterOptions;
import dev.croupier.examples.CroupierCli;
import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.formats.reshard.BadSpecException;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.MemoryLimit;
import dev.croupier.formats.reshard.RecordTransform;
import dev.croupier.formats.reshard.ReshardException;
import dev.croupier.formats.reshard.ReshardProgress;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.formats.reshard.ReshardSpecJson;
import dev.croupier.futures.Cluster;
import dev.croupier.shuffle.reshard.ReshardJob;

/**
 * {@code croupier reshard SPEC.json}: runs a dSort-style reshard job ({@link ReshardJob}) on a
 * cluster ({@link ClusterOptions}). Progress goes to stderr (a bar per phase on a terminal, one
 * JSON object per line otherwise); the summary goes to stdout (a table, or one JSON object with
 * {@code --json}).
 * Exit codes: 0 done, 1 the job failed (nothing was written), 2 bad usage or a bad spec.
 *
 * <p>Thread-safety: one run at a time.
 */
public final class ReshardCommand implements CroupierCli.Command {
    /** Default number of nodes of the embedded cluster. */
    public static final int DEFAULT_NODES = 2;

    private static final Set<String> FLAGS = Set.of("dry-run", "json", "help");
    private static final Set<String> VALUED = ClusterOptions.valuedWith("on-error", "set", "transform");
    private static final String USAGE = """
            usage: croupier reshard SPEC.json [options]
              Reshards (and sorts or shuffles) dataset shards as AIStore dSort does; docs/reshard.md has the spec.
              --dry-run             plan only: list the output shards and their sizes, write nothing
              --on-error=abort|skip
                                    a corrupt input shard fails the job (default) or is skipped and listed as a warning
              --json                print the summary as one JSON object
              --set FIELD=VALUE     override a spec field, repeatable: --set output_shard_size=1MiB --set algorithm.kind=shuffle
              --transform CLASS     a RecordTransform (public no-arg constructor) applied to every record
            """ + ClusterOptions.usage(DEFAULT_NODES, "max_mem_usage / N") + "\n";

    @Override
    public int run(String[] args) throws IOException {
        Options o = Options.parse("reshard", args, FLAGS, VALUED);
        if (o.flag("help")) {
            System.out.print(USAGE);
            return 0;
        }
        List<String> pos = o.positional();
        if (pos.size() != 1) {
            throw new UsageException("needs exactly one SPEC.json, got " + pos);
        }
        boolean json = o.flag("json");
        LocalReshard.OnError onError = switch (o.string("on-error", "abort")) {
            case "abort" -> LocalReshard.OnError.ABORT;
            case "skip" -> LocalReshard.OnError.SKIP;
            default -> throw new UsageException("--on-error = '" + o.string("on-error", "") + "' must be abort or skip");
        };
        Map<String, String> overrides = new LinkedHashMap<>();
        for (String s : o.strings("set")) {
            int eq = s.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--set '" + s + "' must be FIELD=VALUE, e.g. output_shard_size=1MiB");
            }
            overrides.put(s.substring(0, eq), s.substring(eq + 1));
        }
        if (o.flag("dry-run")) {
            overrides.put("dry_run", "true");
        }
        Path specFile = Path.of(pos.getFirst());
        ReshardSpec spec;
        try {
            spec = ReshardSpecJson.parse(Files.readString(specFile), overrides);
        } catch (NoSuchFileException e) {
            throw new UsageException("spec file " + specFile + " does not exist");
        } catch (BadSpecException e) {
            return fail(json, "BAD_SPEC", "spec " + specFile + ": " + e.getMessage(), 2);
        }
        RecordTransform transform = o.string("transform", null) == null ? RecordTransform.IDENTITY
                : transform(o.string("transform", null));
        long maxMemUsage = spec.maxMemUsage().resolve(MemoryLimit.physicalMemoryOfHost());
        ClusterOptions clusterOptions = ClusterOptions.parse(o, DEFAULT_NODES,
                nodes -> Math.max(16L << 20, maxMemUsage / nodes));

        ReshardJob job = ReshardJob.builder(spec).onError(onError).transform(transform)
                .progress(progress(System.console() != null, System.err)).build();
        try (Cluster cluster = clusterOptions.start()) {
            ReshardResult result = job.run(cluster);
            Map<String, Object> failures = ClusterOptions.failureReport(cluster);
            System.out.println(json ? withFailures(result.toJson(), failures) : table(result) + failureLine(failures));
            return 0;
        } catch (ReshardException e) {
            return fail(json, e.kind().name(), e.getMessage(), 1);
        }
    }

    /** The result's JSON object with the failure counts added to its fields. */
    private static String withFailures(String resultJson, Map<String, Object> failures) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode node = (ObjectNode) mapper.readTree(resultJson);
        failures.forEach((k, v) -> node.set(k, mapper.valueToTree(v)));
        return mapper.writeValueAsString(node);
    }

    /** A line under the table when the run lost a node or retried work; nothing after a calm run. */
    private static String failureLine(Map<String, Object> failures) {
        boolean calm = ((Number) failures.get("retried_tasks")).longValue() == 0
                && ((Number) failures.get("rebuilt_objects")).longValue() == 0
                && ((Number) failures.get("nodes_lost")).intValue() == 0;
        return calm ? "" : String.format(Locale.ROOT, "%nfailures: %d tasks retried, %d objects rebuilt, %d nodes lost"
                + " (detected after %s s)", failures.get("retried_tasks"), failures.get("rebuilt_objects"),
                failures.get("nodes_lost"), failures.get("detection_seconds"));
    }

    static RecordTransform transform(String className) {
        try {
            Class<?> c = Class.forName(className);
            if (!RecordTransform.class.isAssignableFrom(c)) {
                throw new UsageException("--transform " + className + " does not implement " + RecordTransform.class.getName());
            }
            return (RecordTransform) c.getConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new UsageException("--transform " + className + ": no such class on the class path");
        } catch (NoSuchMethodException e) {
            throw new UsageException("--transform " + className + " needs a public no-arg constructor");
        } catch (ReflectiveOperationException e) {
            throw new UsageException("--transform " + className + " could not be created: " + e);
        }
    }

    /** A bar per phase on a terminal; one JSON object per line otherwise (for logs and other programs). */
    static ReshardProgress progress(boolean terminal, PrintStream out) {
        return new ReshardProgress() {
            private long last;

            @Override
            public synchronized void update(String phase, long done, long total) {
                if (terminal) {
                    long now = System.nanoTime();
                    if (done < total && now - last < 100_000_000L) {
                        return;
                    }
                    last = now;
                    int width = 40;
                    int filled = (int) (done * width / Math.max(1, total));
                    out.printf(Locale.ROOT, "\r%-10s [%s%s] %d/%d", phase, "#".repeat(filled), " ".repeat(width - filled),
                            done, total);
                    if (done == total) {
                        out.println();
                    }
                } else {
                    out.printf(Locale.ROOT, "{\"phase\":\"%s\",\"done\":%d,\"total\":%d}%n", phase, done, total);
                }
                out.flush();
            }
        };
    }

    static String table(ReshardResult r) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-11s %8s %10s %12s %10s %12s %12s%n",
                "phase", "shards", "records", "bytes", "ms", "memory", "spilled"));
        List<String> names = List.of("extraction", "sorting", "creation");
        List<ReshardResult.Phase> phases = List.of(r.extraction(), r.sorting(), r.creation());
        for (int i = 0; i < names.size(); i++) {
            ReshardResult.Phase p = phases.get(i);
            b.append(String.format(Locale.ROOT, "%-11s %8d %10d %12d %10d %12d %12d%n", names.get(i), p.shards(),
                    p.records(), p.bytes(), p.elapsed().toMillis(), p.memoryBytes(), p.spilledBytes()));
        }
        b.append(r.dryRun() ? "planned" : "wrote").append(' ').append(r.outputs().size()).append(" output shards");
        if (r.shuffleSeed() >= 0) {
            b.append(" (shuffle seed ").append(r.shuffleSeed()).append(')');
        }
        b.append('\n');
        for (ReshardResult.OutputShard s : r.outputs()) {
            b.append(String.format(Locale.ROOT, "  %s  %d records, %d content bytes%s%n", s.path(), s.records(),
                    s.contentBytes(), s.fileBytes() >= 0 ? ", " + s.fileBytes() + " file bytes" : ""));
        }
        for (String w : r.warnings()) {
            b.append("warning: ").append(w).append('\n');
        }
        return b.toString().stripTrailing();
    }

    private static int fail(boolean json, String kind, String message, int code) throws IOException {
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("failed", true);
            m.put("kind", kind);
            m.put("errors", List.of(message));
            System.out.println(new ObjectMapper().writeValueAsString(m));
        } else {
            System.err.println("croupier reshard: " + kind + ": " + message);
        }
        return code;
    }
}
