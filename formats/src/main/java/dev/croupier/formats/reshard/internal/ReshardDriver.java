package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.BadShardException;
import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.NameTemplate;
import dev.croupier.formats.reshard.ReshardException;
import dev.croupier.formats.reshard.ReshardSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * The driver steps of a reshard job, whatever runs its phases: {@link LocalReshard} in one
 * process and the distributed {@code ReshardJob} on a cluster take them from here, so both
 * check the same things in the same order and fail or warn with the same messages. They are:
 * checking the input shards (all missing ones named at once, before any work), reading the
 * external key map, reacting to a record the key map does not take, skipping a corrupt input
 * shard when asked to, naming output shards (failing before anything is written when the
 * names run out) and turning a phase's failure into the job's typed {@link ReshardException}.
 * Packing itself is {@link ShardPacking}.
 *
 * <p>Thread-safety: {@link #skip} may be called from several threads when the warnings
 * consumer is thread-safe; the other instance methods are for the driver thread.
 */
public final class ReshardDriver {
    private final ReshardSpec spec;
    private final Path base;
    private final LocalReshard.OnError onError;
    private final Consumer<String> warnings;
    private final List<Path> skipped = Collections.synchronizedList(new ArrayList<>());
    private KeyMap keyMap;

    /**
     * @param spec the job spec
     * @param base the absolute folder relative names resolve against
     * @param onError what to do with a corrupt input shard
     * @param warnings receives one line per warning
     */
    public ReshardDriver(ReshardSpec spec, Path base, LocalReshard.OnError onError, Consumer<String> warnings) {
        this.spec = spec;
        this.base = base;
        this.onError = onError;
        this.warnings = warnings;
    }

    /**
     * Checks the input shards. Missing shards are reported by name, all of them, before any
     * work starts; {@code missing_shards} says whether that fails the job.
     *
     * @return the input shards present, in spec order
     * @throws ReshardException {@link ReshardException.Kind#MISSING_SHARDS}
     */
    public List<Path> checkInputs() {
        List<Path> inputs = spec.inputShards(base);
        List<Path> present = new ArrayList<>(inputs.size());
        List<Path> missing = new ArrayList<>();
        for (Path p : inputs) {
            (Files.isRegularFile(p) ? present : missing).add(p);
        }
        if (!missing.isEmpty()) {
            if (spec.missingShards() == Reaction.ABORT) {
                throw new ReshardException(ReshardException.Kind.MISSING_SHARDS, missing.size() + " of "
                        + inputs.size() + " input shards are missing: " + missing);
            }
            if (spec.missingShards() == Reaction.WARN) {
                for (Path m : missing) {
                    warnings.accept("missing input shard " + m);
                }
            }
        }
        return present;
    }

    /**
     * Reads {@code ekm_file}, if the spec names one; {@link #output} names shards by it then.
     *
     * @return the key map, or {@code null} when outputs are named by {@code output_format}
     * @throws ReshardException {@link ReshardException.Kind#IO} when it cannot be read
     */
    public KeyMap readKeyMap() {
        if (spec.ekmFile().isEmpty()) {
            return null;
        }
        Path file = base.resolve(spec.ekmFile().get());
        try {
            keyMap = KeyMap.read(file, spec.ekmFileSep(), spec.ekmMalformedLine(), warnings);
            return keyMap;
        } catch (IOException e) {
            throw new ReshardException(ReshardException.Kind.IO, "cannot read ekm_file " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reacts, as {@code ekm_missing_key} says, to a record {@link ShardPacking} dropped. Static
     * because the distributed job plans in tasks, away from the driver.
     *
     * @param m the record
     * @param problem {@link ShardPacking#lastProblem()}: -1 no entry, -2 several
     * @param missingKey the spec's {@code ekm_missing_key}
     * @param warnings receives the warning for {@code warn}
     * @throws ReshardException {@link ReshardException.Kind#CONTENT_KEY} for {@code abort}
     */
    public static void unmapped(RecordMeta m, int problem, Reaction missingKey, Consumer<String> warnings) {
        String msg = "record '" + m.key() + "' (input shard #" + m.shard() + ") matches "
                + (problem == -1 ? "no" : "more than one") + " ekm_file entry";
        switch (missingKey) {
            case ABORT -> throw new ReshardException(ReshardException.Kind.CONTENT_KEY, msg);
            case WARN -> warnings.accept(msg + "; dropped");
            case IGNORE -> { }
        }
    }

    /**
     * Decides whether a failed input shard is skipped: only a corrupt one
     * ({@link BadShardException} anywhere in the cause chain), only with {@code OnError.SKIP}.
     * A skipped shard is listed in the warnings and in {@link #skipped()}.
     *
     * @param input the input shard
     * @param failure why reading it failed
     * @return whether the job goes on without it
     */
    public boolean skip(Path input, Throwable failure) {
        BadShardException bad = cause(failure, BadShardException.class);
        if (bad == null || onError != LocalReshard.OnError.SKIP) {
            return false;
        }
        warnings.accept("skipped input shard " + input + ": " + bad.getMessage());
        skipped.add(input);
        return true;
    }

    /** @return the input shards {@link #skip} skipped, in the order they were skipped */
    public List<Path> skipped() {
        return List.copyOf(skipped);
    }

    /**
     * Fails the job, before anything is written, when packing made more output shards than a
     * template has names.
     *
     * @param shards per template (one without a key map), how many output shards packing made
     * @throws ReshardException {@link ReshardException.Kind#OUT_OF_NAMES}
     */
    public void checkNames(long[] shards) {
        for (int t = 0; t < shards.length; t++) {
            NameTemplate template = keyMap == null ? spec.outputFormat() : keyMap.templates().get(t);
            if (shards[t] > template.count()) {
                throw new ReshardException(ReshardException.Kind.OUT_OF_NAMES, (keyMap == null ? "output_format '"
                        : "ekm_file template '") + template + "' gives " + template.count() + " names but " + shards[t]
                        + " output shards are needed (shard numbers at least " + (template.count() + 1)
                        + " have no name)");
            }
        }
    }

    /**
     * @param template the output shard's template (0 without a key map)
     * @param index its index within the template, within {@link #checkNames checked} names
     * @return its path and format: the name the template gives, resolved against the base
     *     folder; the format its name says, else {@code output_extension}'s
     */
    public OutputName output(int template, long index) {
        ShardFormat defaultFormat = ShardFormat.forExtension(spec.outputExtension()).orElseThrow();
        if (keyMap == null) {
            return new OutputName(spec.outputShard(index, base), defaultFormat);
        }
        String name = keyMap.templates().get(template).name(index);
        return new OutputName(base.resolve(name), ShardFormat.forName(name).orElse(defaultFormat));
    }

    /**
     * The phase's own failure as the job's typed error: a {@link ReshardException} anywhere in
     * the chain as it is, a corrupt shard as {@link ReshardException.Kind#BAD_SHARD}, anything
     * else as {@link ReshardException.Kind#IO} naming the first cause that is not a wrapper.
     *
     * @param what what failed, as in "extracting in/s-001.tar"
     * @param e the failure
     * @param wrapper the runner's wrapper type around a phase's failure (an
     *     {@code ExecutionException}, a task error), skipped when naming the cause
     * @return the exception to throw
     */
    public static ReshardException failure(String what, Throwable e, Class<? extends Throwable> wrapper) {
        ReshardException r = cause(e, ReshardException.class);
        if (r != null) {
            return r;
        }
        BadShardException bad = cause(e, BadShardException.class);
        if (bad != null) {
            return new ReshardException(ReshardException.Kind.BAD_SHARD, "failed " + what + ": " + bad.getMessage(), bad);
        }
        Throwable root = e;
        while (root.getCause() != null && wrapper.isInstance(root)) {
            root = root.getCause();
        }
        return new ReshardException(ReshardException.Kind.IO, "failed " + what + ": " + root, e);
    }

    private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    /**
     * Where one output shard goes.
     *
     * @param path its final path
     * @param format the format it is written in
     */
    public record OutputName(Path path, ShardFormat format) {
    }
}
