package dev.croupier.formats.reshard;

import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.reshard.internal.KeyMap;
import dev.croupier.formats.reshard.internal.RecordMeta;
import dev.croupier.formats.reshard.internal.RecordOrdering;
import dev.croupier.formats.reshard.internal.RecordSource;
import dev.croupier.formats.reshard.internal.ReshardDriver;
import dev.croupier.formats.reshard.internal.ShardCreation;
import dev.croupier.formats.reshard.internal.ShardExtraction;
import dev.croupier.formats.reshard.internal.ShardPacking;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * Runs a reshard job in this process: extraction (input shards read in parallel into an
 * in-memory store that spills to a work folder past the memory budget), sorting of record
 * metadata, and creation (output shards written in parallel). Every output shard is written
 * under a temporary name and all are renamed only after the whole job succeeded; a failed job
 * leaves no output shard and no temporary file. What is not about threads and the local store
 * is shared with the distributed job: its driver steps ({@link ReshardDriver}: input checks,
 * key map, failures, output names) and {@link ShardExtraction}, {@link RecordOrdering},
 * {@link ShardPacking}, {@link ShardCreation}.
 *
 * <p>Thread-safety: a LocalReshard is immutable; {@link #run()} may be called once at a time.
 */
public final class LocalReshard {
    /** What to do with a corrupt input shard. */
    public enum OnError {
        /** Fail the job (dSort's only behaviour). */
        ABORT,
        /** Skip the shard and list it in the result's warnings. */
        SKIP
    }

    /** Share of the JVM's maximum heap the extraction store may use, whatever max_mem_usage says. */
    public static final double HEAP_SHARE = 0.5;

    private final ReshardSpec spec;
    private final Path base;
    private final Path workParent;
    private final RecordTransform transform;
    private final OnError onError;
    private final boolean dryRun;
    private final LongSupplier seedClock;
    private final long physicalMemory;
    private final ReshardProgress progress;

    private LocalReshard(Builder b) {
        this.spec = b.spec;
        this.base = b.base;
        this.workParent = b.workDir;
        this.transform = b.transform;
        this.onError = b.onError;
        this.dryRun = b.dryRun == null ? b.spec.dryRun() : b.dryRun;
        this.seedClock = b.seedClock;
        this.physicalMemory = b.physicalMemory;
        this.progress = b.progress;
    }

    /**
     * @param spec the job spec
     * @return a builder with defaults: paths relative to the current folder, identity transform,
     *     abort on corrupt shards, the spec's dry_run, the system temp folder for spills
     */
    public static Builder builder(ReshardSpec spec) {
        return new Builder(spec);
    }

    /**
     * Runs the job.
     *
     * @return what was written (or planned)
     * @throws ReshardException when the job fails; nothing is left in the output folders then
     */
    public ReshardResult run() {
        List<String> warnings = Collections.synchronizedList(new ArrayList<>());
        ReshardDriver driver = new ReshardDriver(spec, base, onError, warnings::add);
        List<Path> inputs = driver.checkInputs();
        KeyMap keyMap = driver.readKeyMap();
        long memoryLimit = Math.min(spec.maxMemUsage().resolve(physicalMemory),
                (long) (Runtime.getRuntime().maxMemory() * HEAP_SHARE));
        AtomicLong budget = new AtomicLong(memoryLimit);
        Path work;
        try {
            work = Files.createTempDirectory(workParent, "croupier-reshard-");
        } catch (IOException e) {
            throw new ReshardException(ReshardException.Kind.IO, "cannot create a work folder in " + workParent, e);
        }
        ExtractionStore[] stores = new ExtractionStore[inputs.size()];
        try {
            long t0 = System.nanoTime();
            List<RecordMeta> all = extract(inputs, stores, budget, work, warnings, driver);
            List<Path> skipped = driver.skipped();
            long memory = 0;
            long spilled = 0;
            long bytes = 0;
            for (ExtractionStore s : stores) {
                if (s != null) {
                    memory += s.memoryBytes();
                    spilled += s.spilledBytes();
                }
            }
            for (RecordMeta m : all) {
                bytes += m.size();
            }
            long t1 = System.nanoTime();
            ReshardResult.Phase extraction = new ReshardResult.Phase(inputs.size() - skipped.size(), all.size(), bytes,
                    Duration.ofNanos(t1 - t0), memory, spilled);

            long clockSeed = seedClock.getAsLong();
            List<RecordMeta> ordered = RecordOrdering.order(all, spec.algorithm(), clockSeed);
            List<Planned> plan = plan(ordered, bytes, keyMap, driver, warnings);
            long t2 = System.nanoTime();
            ReshardResult.Phase sorting = new ReshardResult.Phase(0, ordered.size(), bytes, Duration.ofNanos(t2 - t1), 0, 0);
            long seed = spec.algorithm().kind() == Algorithm.Kind.SHUFFLE
                    ? RecordOrdering.seedOf(spec.algorithm(), clockSeed) : -1;

            List<ReshardResult.OutputShard> outputs = new ArrayList<>();
            if (dryRun) {
                for (Planned p : plan) {
                    outputs.add(new ReshardResult.OutputShard(p.target(), p.records().size(),
                            p.records().stream().mapToLong(RecordMeta::size).sum(), -1));
                }
                return new ReshardResult(true, outputs, extraction, sorting, ReshardResult.Phase.NONE, seed, warnings, skipped);
            }
            outputs = create(plan, stores);
            long t3 = System.nanoTime();
            ReshardResult.Phase creation = new ReshardResult.Phase(outputs.size(),
                    outputs.stream().mapToLong(ReshardResult.OutputShard::records).sum(),
                    outputs.stream().mapToLong(ReshardResult.OutputShard::contentBytes).sum(),
                    Duration.ofNanos(t3 - t2), 0, 0);
            return new ReshardResult(false, outputs, extraction, sorting, creation, seed, warnings, skipped);
        } finally {
            for (ExtractionStore s : stores) {
                if (s != null) {
                    try {
                        s.close();
                    } catch (IOException e) {
                        warnings.add("could not delete a spill file: " + e.getMessage());
                    }
                }
            }
            deleteTree(work);
        }
    }

    private List<RecordMeta> extract(List<Path> inputs, ExtractionStore[] stores, AtomicLong budget, Path work,
                                     List<String> warnings, ReshardDriver driver) {
        int threads = threads(spec.extractConcurrencyMaxLimit(), inputs.size());
        AtomicLong extracted = new AtomicLong();
        String contentExt = spec.algorithm().kind() == Algorithm.Kind.CONTENT ? spec.algorithm().extension() : null;
        ExecutorService pool = Executors.newFixedThreadPool(threads, Thread.ofPlatform().daemon().name("extract-", 0).factory());
        try {
            List<Future<List<RecordMeta>>> futures = new ArrayList<>();
            for (int i = 0; i < inputs.size(); i++) {
                int index = i;
                stores[i] = new ExtractionStore(budget, work, !dryRun);
                futures.add(pool.submit(() -> {
                    List<RecordMeta> metas = ShardExtraction.extract(inputs.get(index), index, stores[index],
                            spec.duplicatedRecords(), contentExt, warnings::add);
                    stores[index].seal();
                    progress.update("extraction", extracted.incrementAndGet(), inputs.size());
                    return metas;
                }));
            }
            List<RecordMeta> all = new ArrayList<>();
            for (int i = 0; i < futures.size(); i++) {
                try {
                    all.addAll(futures.get(i).get());
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (driver.skip(inputs.get(i), c)) {
                        closeQuietly(stores[i]);
                        continue;
                    }
                    throw ReshardDriver.failure("extracting " + inputs.get(i), c, ExecutionException.class);
                }
            }
            return all;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReshardException(ReshardException.Kind.IO, "interrupted during extraction", e);
        } finally {
            pool.shutdownNow();
            awaitQuietly(pool);
        }
    }

    private List<ReshardResult.OutputShard> create(List<Planned> plan, ExtractionStore[] stores) {
        RecordSource source = m -> stores[m.shard()].load(m.key(), m.handle());
        int threads = threads(spec.createConcurrencyMaxLimit(), plan.size());
        ExecutorService pool = Executors.newFixedThreadPool(threads, Thread.ofPlatform().daemon().name("create-", 0).factory());
        List<Future<ShardCreation.Created>> futures = new ArrayList<>();
        List<ShardCreation.Created> done = new ArrayList<>();
        boolean committed = false;
        try {
            for (Planned p : plan) {
                Files.createDirectories(p.target().toAbsolutePath().getParent());
            }
            AtomicLong created = new AtomicLong();
            for (Planned p : plan) {
                futures.add(pool.submit(() -> {
                    ShardCreation.Created c = ShardCreation.create(p.records(), source, p.format(), p.target(), transform);
                    progress.update("creation", created.incrementAndGet(), plan.size());
                    return c;
                }));
            }
            // Wait for every task, even after a failure, so no finished temporary file is missed below.
            Throwable failure = null;
            for (Future<ShardCreation.Created> f : futures) {
                try {
                    done.add(f.get());
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause();
                    }
                }
            }
            if (failure != null) {
                throw ReshardDriver.failure("creating output shards", failure, ExecutionException.class);
            }
            List<ReshardResult.OutputShard> out = new ArrayList<>();
            for (ShardCreation.Created c : done) {
                c.pending().commit();
                out.add(new ReshardResult.OutputShard(c.pending().target(), c.records(), c.contentBytes(), c.pending().size()));
            }
            committed = true;
            return out;
        } catch (IOException e) {
            throw new ReshardException(ReshardException.Kind.IO, "creating output shards failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReshardException(ReshardException.Kind.IO, "interrupted during creation", e);
        } finally {
            pool.shutdownNow();
            awaitQuietly(pool);
            if (!committed) {
                for (ShardCreation.Created c : done) {
                    try {
                        c.pending().discard();
                    } catch (IOException ignored) {
                        // Nothing more can be done; the name is a dot-file with a .tmp suffix.
                    }
                }
            }
        }
    }

    /** One output shard to create. */
    private record Planned(Path target, ShardFormat format, List<RecordMeta> records) {
    }

    /**
     * Cuts ordered records into output shards with {@link ShardPacking}: one template
     * (output_format), or one per key map template, in template then index order.
     */
    private List<Planned> plan(List<RecordMeta> ordered, long totalBytes, KeyMap keyMap, ReshardDriver driver,
                               List<String> warnings) {
        ShardPacking packing = ShardPacking.start(spec, keyMap, totalBytes);
        TreeMap<Long, List<RecordMeta>> shards = new TreeMap<>();
        for (RecordMeta m : ordered) {
            int t = packing.place(m);
            if (t == ShardPacking.DROPPED) {
                ReshardDriver.unmapped(m, packing.lastProblem(), spec.ekmMissingKey(), warnings::add);
                continue;
            }
            shards.computeIfAbsent(ShardPacking.outputId(t, packing.lastIndex()), k -> new ArrayList<>()).add(m);
        }
        long[] counts = new long[ShardPacking.templates(keyMap)];
        for (long id : shards.keySet()) {
            counts[ShardPacking.templateOf(id)] = ShardPacking.indexOf(id) + 1;
        }
        driver.checkNames(counts);
        List<Planned> plan = new ArrayList<>(shards.size());
        for (Map.Entry<Long, List<RecordMeta>> e : shards.entrySet()) {
            ReshardDriver.OutputName out = driver.output(ShardPacking.templateOf(e.getKey()),
                    ShardPacking.indexOf(e.getKey()));
            plan.add(new Planned(out.path(), out.format(), e.getValue()));
        }
        return plan;
    }

    private static int threads(int limit, int work) {
        int auto = Runtime.getRuntime().availableProcessors();
        return Math.max(1, Math.min(limit > 0 ? limit : auto, Math.max(1, work)));
    }

    private static void awaitQuietly(ExecutorService pool) {
        try {
            if (!pool.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new ReshardException(ReshardException.Kind.IO, "reshard tasks did not stop within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(ExtractionStore s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // The work folder is deleted at the end of the job anyway.
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // Best effort: a work folder left in the temp dir is harmless and named croupier-reshard-*.
        }
    }

    /**
     * Configures a {@link LocalReshard}; {@link #build()} checks every knob.
     *
     * <p>Thread-safety: not thread-safe.
     */
    public static final class Builder {
        private final ReshardSpec spec;
        private Path base = Path.of("").toAbsolutePath();
        private Path workDir = Path.of(System.getProperty("java.io.tmpdir"));
        private RecordTransform transform = RecordTransform.IDENTITY;
        private OnError onError = OnError.ABORT;
        private Boolean dryRun;
        private LongSupplier seedClock = System::currentTimeMillis;
        private long physicalMemory = MemoryLimit.physicalMemoryOfHost();
        private ReshardProgress progress = ReshardProgress.NONE;

        private Builder(ReshardSpec spec) {
            if (spec == null) {
                throw new IllegalArgumentException("spec must not be null");
            }
            this.spec = spec;
        }

        /** @param dir folder relative input and output names resolve against (default: current folder) @return this */
        public Builder baseDir(Path dir) {
            this.base = dir;
            return this;
        }

        /** @param dir folder for the spill work folder (default: java.io.tmpdir) @return this */
        public Builder workDir(Path dir) {
            this.workDir = dir;
            return this;
        }

        /** @param t applied to every record during creation @return this */
        public Builder transform(RecordTransform t) {
            this.transform = t;
            return this;
        }

        /** @param onError what to do with a corrupt input shard (default abort) @return this */
        public Builder onError(OnError onError) {
            this.onError = onError;
            return this;
        }

        /** @param dryRun overrides the spec's dry_run @return this */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        /** @param clock source of the shuffle seed when the spec has none (default: wall clock ms) @return this */
        public Builder seedClock(LongSupplier clock) {
            this.seedClock = clock;
            return this;
        }

        /** @param bytes physical memory max_mem_usage percentages refer to (default: this host's) @return this */
        public Builder physicalMemory(long bytes) {
            this.physicalMemory = bytes;
            return this;
        }

        /** @param listener receives progress as shards finish (default: none) @return this */
        public Builder progress(ReshardProgress listener) {
            this.progress = listener;
            return this;
        }

        /** @return the job @throws IllegalArgumentException naming the knob, value and range */
        public LocalReshard build() {
            if (base == null || workDir == null || transform == null || onError == null || seedClock == null
                    || progress == null) {
                throw new IllegalArgumentException(
                        "baseDir, workDir, transform, onError, seedClock and progress must not be null");
            }
            if (!Files.isDirectory(workDir)) {
                throw new IllegalArgumentException("workDir: '" + workDir + "' is not a folder");
            }
            if (physicalMemory <= 0) {
                throw new IllegalArgumentException("physicalMemory: " + physicalMemory + " must be > 0");
            }
            base = base.toAbsolutePath();
            return new LocalReshard(this);
        }
    }
}
