package dev.croupier.shuffle.reshard;

import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.LocalReshard;
import dev.croupier.formats.reshard.MemoryLimit;
import dev.croupier.formats.reshard.RecordTransform;
import dev.croupier.formats.reshard.ReshardException;
import dev.croupier.formats.reshard.ReshardProgress;
import dev.croupier.formats.reshard.ReshardResult;
import dev.croupier.formats.reshard.ReshardSpec;
import dev.croupier.formats.reshard.internal.KeyMap;
import dev.croupier.formats.reshard.internal.RecordMeta;
import dev.croupier.formats.reshard.internal.RecordOrdering;
import dev.croupier.formats.reshard.internal.ReshardDriver;
import dev.croupier.formats.reshard.internal.ShardPacking;
import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.ClusterStats;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Resharding of ML dataset shards on a cluster, in AIStore dSort's three phases:
 * <ol>
 *   <li><b>extraction</b>: one task per input shard reads it once; the records' bytes stay in
 *       that node's object store (spilling past its capacity) and only their metadata comes
 *       back, as a separate object;</li>
 *   <li><b>sorting</b>: the metadata is sorted by a sample-based range-partitioned shuffle
 *       ({@link ShuffleJob}), so no node ever holds all of it; a chain of small planning tasks
 *       then cuts the sorted partitions into output shards;</li>
 *   <li><b>creation</b>: one task per output shard, spread over the nodes, gathers its records
 *       and writes it under a temporary name; only once every shard is written are all renamed
 *       to their final names. A failed job leaves no output shard and no temporary file. On more
 *       than one node a gather step comes first: each extracted shard is cut, on its own node,
 *       into one frame per output shard created elsewhere, so only the records' own bytes travel
 *       and never a whole extracted shard.</li>
 * </ol>
 * The algorithms are {@link RecordOrdering}'s: for every kind but {@code shuffle} the output is
 * exactly what {@link LocalReshard} writes; a seeded shuffle gives the same output on every run,
 * whatever the number of nodes or sort partitions (a different permutation from the
 * single-process one, see {@code docs/reshard.md}).
 *
 * <p>The cluster's object-store capacity is the memory bound of extraction: {@code max_mem_usage}
 * is for whoever builds the cluster (the CLI sizes the stores with it). A job given a cluster
 * with more store memory than {@code max_mem_usage} says so in its warnings, since it cannot
 * shrink stores other jobs may share.
 *
 * <p>Thread-safety: immutable; {@link #run} may be called from several threads, each run independent.
 */
public final class ReshardJob {
    /** Default number of metadata records sampled from each input shard to choose splitters. */
    public static final int DEFAULT_SAMPLES_PER_SHARD = 64;

    private final ReshardSpec spec;
    private final Path base;
    private final RecordTransform transform;
    private final LocalReshard.OnError onError;
    private final boolean dryRun;
    private final LongSupplier seedClock;
    private final ReshardProgress progress;
    private final int sortPartitions;
    private final int samplesPerShard;

    private ReshardJob(Builder b) {
        this.spec = b.spec;
        this.base = b.base.toAbsolutePath();
        this.transform = b.transform;
        this.onError = b.onError;
        this.dryRun = b.spec.dryRun();
        this.seedClock = b.seedClock;
        this.progress = b.progress;
        this.sortPartitions = b.sortPartitions;
        this.samplesPerShard = b.samplesPerShard;
    }

    /**
     * @param spec what to reshard and how: build one with {@link ReshardSpec#builder()} or read
     *             one with {@link dev.croupier.formats.reshard.ReshardSpecJson}
     * @return a builder of a job running {@code spec}, with defaults for every other setting
     */
    public static Builder builder(ReshardSpec spec) {
        return new Builder(spec);
    }

    /** @return the validated spec the job runs */
    public ReshardSpec spec() {
        return spec;
    }

    /**
     * Runs the job on {@code cluster} and waits for it.
     *
     * @param cluster any cluster of the futures runtime; it is not closed
     * @return what was written (or, for a dry run, planned)
     * @throws ReshardException when the job fails; nothing is left in the output folders then
     */
    public ReshardResult run(Cluster cluster) {
        List<String> warnings = Collections.synchronizedList(new ArrayList<>());
        long memoryLimit = spec.maxMemUsage().resolve(MemoryLimit.physicalMemoryOfHost());
        long storeMemory = cluster.objectStoreBytes() * cluster.aliveNodes().size();
        if (storeMemory > memoryLimit) {
            // A job cannot shrink the stores of a cluster it shares; say which bound holds.
            warnings.add("max_mem_usage " + spec.maxMemUsage() + " (" + memoryLimit + " bytes) is below the cluster's "
                    + "object-store memory (" + storeMemory + " bytes): extracted records stay in memory up to the "
                    + "stores' capacity before they spill; size the cluster's stores to enforce it");
        }
        ReshardDriver driver = new ReshardDriver(spec, base, onError, warnings::add);
        List<Path> inputs = driver.checkInputs();
        KeyMap keyMap = driver.readKeyMap();
        List<ObjectRef<?>> owned = new ArrayList<>();
        ShuffleResult<byte[]> sorted = null;
        try {
            long t0 = System.nanoTime();
            long spilled0 = spilled(cluster);
            Extraction ex = extract(cluster, inputs, owned, warnings, driver);
            long t1 = System.nanoTime();
            ReshardResult.Phase extraction = new ReshardResult.Phase(ex.metas.size(), ex.records, ex.bytes,
                    Duration.ofNanos(t1 - t0), inMemory(cluster), spilled(cluster) - spilled0);

            long clockSeed = seedClock.getAsLong();
            long seed = RecordOrdering.seedOf(spec.algorithm(), clockSeed);
            long shuffleSeed = spec.algorithm().kind() == Algorithm.Kind.SHUFFLE ? seed : -1;
            if (ex.records == 0) {
                return new ReshardResult(dryRun, List.of(), extraction, ReshardResult.Phase.NONE,
                        ReshardResult.Phase.NONE, shuffleSeed, warnings, ex.skipped);
            }
            int partitions = sortPartitions > 0 ? sortPartitions
                    : Math.max(1, Math.min(ex.metas.size(), 2 * cluster.aliveNodes().size()));
            sorted = sort(cluster, ex, partitions, seed, owned);
            long packTarget = ShardPacking.target(spec, ex.bytes);
            boolean byCount = ShardPacking.byCount(spec);
            List<PlanSummary> plans = plan(cluster, sorted.refs(), keyMap, packTarget, byCount, owned);
            for (PlanSummary p : plans) {
                warnings.addAll(p.warnings());
            }
            Map<Long, Output> outputs = outputs(plans, keyMap, driver);
            long t2 = System.nanoTime();
            ReshardResult.Phase sorting = new ReshardResult.Phase(partitions, ex.records, ex.bytes,
                    Duration.ofNanos(t2 - t1), inMemory(cluster), spilled(cluster) - spilled0 - extraction.spilledBytes());
            if (dryRun) {
                List<ReshardResult.OutputShard> planned = new ArrayList<>();
                for (Output o : outputs.values()) {
                    planned.add(new ReshardResult.OutputShard(o.path, o.records, o.bytes, -1));
                }
                return new ReshardResult(true, planned, extraction, sorting, ReshardResult.Phase.NONE, shuffleSeed,
                        warnings, ex.skipped);
            }
            List<ReshardResult.OutputShard> written = create(cluster, outputs, plans, sorted.refs(), ex, keyMap,
                    packTarget, byCount);
            long t3 = System.nanoTime();
            ReshardResult.Phase creation = new ReshardResult.Phase(written.size(),
                    written.stream().mapToLong(ReshardResult.OutputShard::records).sum(),
                    written.stream().mapToLong(ReshardResult.OutputShard::contentBytes).sum(),
                    Duration.ofNanos(t3 - t2), inMemory(cluster),
                    spilled(cluster) - spilled0 - extraction.spilledBytes() - sorting.spilledBytes());
            return new ReshardResult(false, written, extraction, sorting, creation, shuffleSeed, warnings, ex.skipped);
        } finally {
            if (sorted != null) {
                sorted.release();
            }
            for (ObjectRef<?> r : owned) {
                r.release();
            }
        }
    }

    /**
     * One extracted input shard: its frame, and the node it was extracted on (asked for; a node
     * death may have moved it, which costs a fetch, not a result).
     */
    private record Extracted(int node, ObjectRef<MemorySegment> frame) {
    }

    /** The extracted input shards that survived, by input index, and their metadata blocks. */
    private record Extraction(Map<Integer, Extracted> shards, List<ObjectRef<byte[]>> metas, long records, long bytes,
                              List<Path> skipped) {
        int nodeOf(int shard) {
            return shards.get(shard).node();
        }

        ObjectRef<MemorySegment> frameOf(int shard) {
            return shards.get(shard).frame();
        }
    }

    @SuppressWarnings("unchecked")
    private Extraction extract(Cluster cluster, List<Path> inputs, List<ObjectRef<?>> owned, List<String> warnings,
                               ReshardDriver driver) {
        String contentExt = spec.algorithm().kind() == Algorithm.Kind.CONTENT ? spec.algorithm().extension() : null;
        boolean keepBytes = !dryRun;
        Reaction duplicates = spec.duplicatedRecords();
        int nodes = Math.max(1, cluster.aliveNodes().size());
        List<Integer> alive = cluster.aliveNodes();
        List<List<ObjectRef<Object>>> refs = new ArrayList<>(inputs.size());
        AtomicLong done = new AtomicLong();
        Throttle throttle = new Throttle(cluster, spec.extractConcurrencyMaxLimit());
        for (int i = 0; i < inputs.size(); i++) {
            String path = inputs.get(i).toString();
            int index = i;
            throttle.beforeSubmit();
            List<ObjectRef<Object>> r = cluster.task(ReshardTasks::extract, path, index, keepBytes, duplicates, contentExt)
                    .name("reshard-extract").onNode(alive.get(i % nodes), Affinity.SOFT).<Object>numReturns(3).remote();
            owned.addAll(r);
            refs.add(r);
            throttle.submitted(r.get(2));
            r.get(2).whenDone().thenRun(() -> progress.update("extraction", done.incrementAndGet(), inputs.size()));
        }
        Map<Integer, Extracted> extracted = new HashMap<>();
        List<ObjectRef<byte[]>> metas = new ArrayList<>();
        long records = 0;
        long bytes = 0;
        RuntimeException failure = null;
        for (int i = 0; i < inputs.size(); i++) {
            ReshardTasks.ExtractionReport report;
            try {
                report = ReshardTasks.ExtractionReport.decode((byte[]) refs.get(i).get(2).get());
            } catch (CroupierException e) {
                if (!driver.skip(inputs.get(i), e) && failure == null) {
                    failure = failure("extracting " + inputs.get(i), e);
                }
                continue;
            }
            records += report.records();
            bytes += report.bytes();
            warnings.addAll(report.warnings());
            ObjectRef<MemorySegment> frame = (ObjectRef<MemorySegment>) (ObjectRef<?>) refs.get(i).get(0);
            extracted.put(i, new Extracted(alive.get(i % nodes), frame));
            metas.add((ObjectRef<byte[]>) (ObjectRef<?>) refs.get(i).get(1));
        }
        if (failure != null) {
            throw failure;
        }
        return new Extraction(extracted, metas, records, bytes, driver.skipped());
    }

    private ShuffleResult<byte[]> sort(Cluster cluster, Extraction ex, int partitions, long seed,
                                       List<ObjectRef<?>> owned) {
        Algorithm algorithm = spec.algorithm();
        byte[] splitters = MetaBlock.encode(List.of());
        if (algorithm.kind() != Algorithm.Kind.SHUFFLE && partitions > 1) {
            List<ObjectRef<byte[]>> samples = new ArrayList<>();
            int perShard = samplesPerShard;
            for (ObjectRef<byte[]> m : ex.metas) {
                ObjectRef<byte[]> s = cluster.task((byte[] block) -> ReshardTasks.sample(block, perShard), m)
                        .name("reshard-sample").remote();
                owned.add(s);
                samples.add(s);
            }
            List<RecordMeta> all = new ArrayList<>();
            try {
                for (ObjectRef<byte[]> s : samples) {
                    all.addAll(MetaBlock.decode(s.get()));
                }
                splitters = MetaBlock.encode(ReshardTasks.splitters(all, algorithm, partitions));
            } catch (RuntimeException e) {
                throw failure("sampling record metadata", e);
            }
        }
        byte[] cuts = splitters;
        AtomicLong done = new AtomicLong();
        ShuffleResult<byte[]> result = ShuffleJob.<byte[], byte[], byte[]>builder()
                .name("reshard-sort")
                .inputs(ex.metas)
                .mapper((byte[] block, int r) -> ReshardTasks.partition(block, r, cuts, algorithm, seed))
                .merger((int p, List<byte[]> blocks) -> MetaBlock.concat(blocks))
                .reducer((int p, List<byte[]> blocks) -> ReshardTasks.order(blocks, algorithm, seed))
                .partitions(partitions)
                .strategy(Strategy.SIMPLE)
                .build()
                .run(cluster);
        for (ObjectRef<byte[]> r : result.refs()) {
            r.whenDone().thenRun(() -> progress.update("sorting", done.incrementAndGet(), partitions));
        }
        return result;
    }

    private List<PlanSummary> plan(Cluster cluster, List<ObjectRef<byte[]>> sortedRefs, KeyMap keyMap, long target,
                                   boolean byCount, List<ObjectRef<?>> owned) {
        Reaction missingKey = spec.ekmMissingKey();
        long[] start = new long[2 * ShardPacking.templates(keyMap)];
        byte[] initial = new PlanSummary(start, start, List.of(), List.of()).encode();
        List<ObjectRef<byte[]>> summaries = new ArrayList<>(sortedRefs.size());
        Object previous = initial;
        for (ObjectRef<byte[]> part : sortedRefs) {
            ObjectRef<byte[]> s = cluster.task((byte[] sorted, byte[] prev) ->
                            ReshardTasks.plan(sorted, prev, keyMap, target, byCount, missingKey), part, previous)
                    .name("reshard-plan").remote();
            owned.add(s);
            summaries.add(s);
            previous = s;
        }
        List<PlanSummary> out = new ArrayList<>(summaries.size());
        try {
            for (ObjectRef<byte[]> s : summaries) {
                out.add(PlanSummary.decode(s.get()));
            }
        } catch (RuntimeException e) {
            throw failure("sorting record metadata", e);
        }
        return out;
    }

    /** One output shard as planned: where it goes and which partitions and input shards it needs. */
    private static final class Output {
        final int template;
        final long index;
        Path path;
        ShardFormat format;
        long records;
        long bytes;
        final List<Integer> partitions = new ArrayList<>();
        final TreeSet<Integer> shards = new TreeSet<>();

        Output(int template, long index) {
            this.template = template;
            this.index = index;
        }

        long id() {
            return ShardPacking.outputId(template, index);
        }
    }

    private Map<Long, Output> outputs(List<PlanSummary> plans, KeyMap keyMap, ReshardDriver driver) {
        Map<Long, Output> outputs = new LinkedHashMap<>();
        long[] counts = new long[ShardPacking.templates(keyMap)];
        for (int p = 0; p < plans.size(); p++) {
            for (PlanSummary.Piece piece : plans.get(p).pieces()) {
                Output o = outputs.computeIfAbsent(ShardPacking.outputId(piece.template(), piece.index()),
                        k -> new Output(piece.template(), piece.index()));
                o.records += piece.records();
                o.bytes += piece.bytes();
                o.partitions.add(p);
                for (int s : piece.shards()) {
                    o.shards.add(s);
                }
                counts[piece.template()] = Math.max(counts[piece.template()], piece.index() + 1);
            }
        }
        driver.checkNames(counts);
        for (Output o : outputs.values()) {
            ReshardDriver.OutputName name = driver.output(o.template, o.index);
            o.path = name.path();
            o.format = name.format();
        }
        return outputs;
    }

    private List<ReshardResult.OutputShard> create(Cluster cluster, Map<Long, Output> outputs, List<PlanSummary> plans,
                                                   List<ObjectRef<byte[]>> sortedRefs, Extraction ex, KeyMap keyMap,
                                                   long packTarget, boolean byCount) {
        try {
            for (Output o : outputs.values()) {
                Files.createDirectories(o.path.getParent());
            }
        } catch (IOException e) {
            throw new ReshardException(ReshardException.Kind.IO, "cannot create an output folder: " + e.getMessage(), e);
        }
        List<Output> order = new ArrayList<>(outputs.values());
        try {
            return createAll(cluster, order, plans, sortedRefs, ex, keyMap, packTarget, byCount);
        } finally {
            sweepOrphans(order);
        }
    }

    /**
     * Deletes the temporary files of attempts the runtime gave up on. A creation attempt on a
     * node that dies may have written (all or part of) its shard under a temporary name before
     * the task was re-run elsewhere under another; only the re-run's file is committed or
     * discarded by name. Temporary names are {@code .<output name>.<random>.tmp}, so the
     * sweep takes exactly those of this job's outputs.
     */
    private static void sweepOrphans(List<Output> order) {
        Map<Path, Set<String>> prefixesByDir = new HashMap<>();
        for (Output o : order) {
            prefixesByDir.computeIfAbsent(o.path.toAbsolutePath().getParent(), d -> new HashSet<>())
                    .add("." + o.path.getFileName() + ".");
        }
        for (Map.Entry<Path, Set<String>> e : prefixesByDir.entrySet()) {
            try (DirectoryStream<Path> temps = Files.newDirectoryStream(e.getKey(), ".*.tmp")) {
                for (Path t : temps) {
                    String name = t.getFileName().toString();
                    int cut = name.lastIndexOf('.', name.length() - ".tmp".length() - 1);
                    if (cut > 0 && e.getValue().contains(name.substring(0, cut + 1))) {
                        Files.deleteIfExists(t);
                    }
                }
            } catch (IOException ignored) {
                // a folder that is gone holds no orphan; a file that cannot be deleted stays a dot-file
            }
        }
    }

    private List<ReshardResult.OutputShard> createAll(Cluster cluster, List<Output> order, List<PlanSummary> plans,
                                                      List<ObjectRef<byte[]>> sortedRefs, Extraction ex, KeyMap keyMap,
                                                      long packTarget, boolean byCount) {
        RecordTransform fn = transform;
        AtomicLong done = new AtomicLong();
        Throttle throttle = new Throttle(cluster, spec.createConcurrencyMaxLimit());
        List<ObjectRef<byte[]>> refs = new ArrayList<>(order.size());
        List<Integer> alive = cluster.aliveNodes();
        int[] home = new int[order.size()];
        for (int k = 0; k < order.size(); k++) {
            home[k] = alive.get(k % alive.size());
        }
        List<ObjectRef<?>> gathered = new ArrayList<>();
        try {
            Map<Integer, Gather> gathers = gather(cluster, order, home, plans, sortedRefs, ex, keyMap, packTarget,
                    byCount, gathered);
            for (int k = 0; k < order.size(); k++) {
                Output o = order.get(k);
                List<ObjectRef<byte[]>> parts = new ArrayList<>();
                long[][] carries = new long[o.partitions.size()][];
                for (int i = 0; i < o.partitions.size(); i++) {
                    parts.add(sortedRefs.get(o.partitions.get(i)));
                    carries[i] = plans.get(o.partitions.get(i)).carryIn();
                }
                int[] shardIds = o.shards.stream().mapToInt(Integer::intValue).toArray();
                boolean[] isCut = new boolean[shardIds.length];
                List<ObjectRef<MemorySegment>> frames = new ArrayList<>(shardIds.length);
                for (int i = 0; i < shardIds.length; i++) {
                    Gather g = ex.nodeOf(shardIds[i]) == home[k] ? null : gathers.get(shardIds[i]);
                    isCut[i] = g != null;
                    frames.add(g == null ? ex.frameOf(shardIds[i]) : g.frameFor(o.id()));
                }
                ReshardTasks.ShardOrder shardOrder = new ReshardTasks.ShardOrder(o.template, o.index, o.path.toString(),
                        o.format.defaultExtension(), carries, shardIds, isCut);
                throttle.beforeSubmit();
                ObjectRef<byte[]> r = cluster.task(
                        (List<byte[]> ps, List<MemorySegment> fs, ReshardTasks.ShardOrder so) ->
                                ReshardTasks.create(ps, fs, so, keyMap, packTarget, byCount, fn),
                        ObjectRef.all(parts), ObjectRef.all(frames), shardOrder)
                        .name("reshard-create").onNode(home[k], Affinity.SOFT).remote();
                refs.add(r);
                throttle.submitted(r);
                r.whenDone().thenRun(() -> progress.update("creation", done.incrementAndGet(), order.size()));
            }
        } catch (RuntimeException e) {
            discardAll(refs);
            throw e;
        } finally {
            // Submitted tasks keep their arguments; these refs are the driver's own.
            for (ObjectRef<?> g : gathered) {
                g.release();
            }
        }
        // Wait for every task, even after a failure, so no finished temporary file is missed.
        List<ReshardTasks.CreatedShard> created = new ArrayList<>(refs.size());
        RuntimeException failure = null;
        for (int i = 0; i < refs.size(); i++) {
            try {
                created.add(ReshardTasks.CreatedShard.decode(refs.get(i).get()));
            } catch (CroupierException e) {
                created.add(null);
                if (failure == null) {
                    failure = failure("creating " + order.get(i).path, e);
                }
            }
        }
        for (ObjectRef<byte[]> r : refs) {
            r.release();
        }
        if (failure != null) {
            discard(created);
            throw failure;
        }
        List<ReshardResult.OutputShard> out = new ArrayList<>(order.size());
        try {
            for (int i = 0; i < order.size(); i++) {
                ReshardTasks.CreatedShard c = created.get(i);
                Path target = order.get(i).path;
                new dev.croupier.formats.PendingShard(Path.of(c.temporary()), target, c.fileBytes()).commit();
                created.set(i, null);
                out.add(new ReshardResult.OutputShard(target, c.records(), c.contentBytes(), c.fileBytes()));
            }
        } catch (IOException e) {
            discard(created);
            throw new ReshardException(ReshardException.Kind.IO, "committing output shards failed: " + e.getMessage(), e);
        }
        return out;
    }

    /** The cut frames of one extracted shard: one per output shard created away from it. */
    private record Gather(long[] outputs, List<ObjectRef<MemorySegment>> frames) {
        ObjectRef<MemorySegment> frameFor(long output) {
            return frames.get(Arrays.binarySearch(outputs, output));
        }
    }

    /**
     * The gather step: every output shard of a shuffle takes records from nearly every input
     * shard, so a creation task given whole extracted shards would fetch all of each remote
     * one. Instead one routing task per sorted partition tells where each record goes, and one
     * cut task per extracted shard, on its node, copies out the records of each output created
     * on another node; only those bytes travel. Outputs created where a shard lies read it in
     * place. On one node there is nothing to gather and no task is run.
     *
     * @return the cut frames by input shard, for the shards that have any
     */
    private Map<Integer, Gather> gather(Cluster cluster, List<Output> order, int[] home, List<PlanSummary> plans,
                                        List<ObjectRef<byte[]>> sortedRefs, Extraction ex, KeyMap keyMap,
                                        long packTarget, boolean byCount, List<ObjectRef<?>> gathered) {
        Map<Integer, TreeSet<Long>> awayOutputs = new TreeMap<>();
        for (int k = 0; k < order.size(); k++) {
            for (int s : order.get(k).shards) {
                if (ex.nodeOf(s) != home[k]) {
                    awayOutputs.computeIfAbsent(s, x -> new TreeSet<>()).add(order.get(k).id());
                }
            }
        }
        if (awayOutputs.isEmpty()) {
            return Map.of();
        }
        int[] cutShards = awayOutputs.keySet().stream().mapToInt(Integer::intValue).toArray();
        List<List<ObjectRef<byte[]>>> routes = new ArrayList<>(sortedRefs.size());
        for (int p = 0; p < sortedRefs.size(); p++) {
            long[] carryIn = plans.get(p).carryIn();
            List<ObjectRef<byte[]>> r = cluster.task((byte[] sorted) ->
                            ReshardTasks.route(sorted, carryIn, cutShards, keyMap, packTarget, byCount), sortedRefs.get(p))
                    .name("reshard-route").<byte[]>numReturns(cutShards.length).remote();
            gathered.addAll(r);
            routes.add(r);
        }
        Map<Integer, Gather> gathers = new HashMap<>();
        for (int j = 0; j < cutShards.length; j++) {
            int shard = cutShards[j];
            long[] outputs = awayOutputs.get(shard).stream().mapToLong(Long::longValue).toArray();
            List<ObjectRef<byte[]>> forShard = new ArrayList<>(routes.size());
            for (List<ObjectRef<byte[]>> r : routes) {
                forShard.add(r.get(j));
            }
            List<ObjectRef<MemorySegment>> frames = cluster.task((MemorySegment frame, List<byte[]> rs) ->
                            ReshardTasks.cut(frame, rs, outputs), ex.frameOf(shard), ObjectRef.all(forShard))
                    .name("reshard-cut").onNode(ex.nodeOf(shard), Affinity.SOFT)
                    .<MemorySegment>numReturns(outputs.length).remote();
            gathered.addAll(frames);
            gathers.put(shard, new Gather(outputs, frames));
        }
        return gathers;
    }

    private static void discardAll(List<ObjectRef<byte[]>> refs) {
        List<ReshardTasks.CreatedShard> created = new ArrayList<>();
        for (ObjectRef<byte[]> r : refs) {
            try {
                created.add(ReshardTasks.CreatedShard.decode(r.get()));
            } catch (CroupierException e) {
                created.add(null);
            }
            r.release();
        }
        discard(created);
    }

    private static void discard(List<ReshardTasks.CreatedShard> created) {
        for (ReshardTasks.CreatedShard c : created) {
            if (c != null) {
                try {
                    Files.deleteIfExists(Path.of(c.temporary()));
                } catch (IOException ignored) {
                    // Nothing more can be done; the name is a dot-file with a .tmp suffix.
                }
            }
        }
    }

    /** Bounds tasks in flight (a spec concurrency limit; 0 leaves it to the cluster's CPU slots). */
    private static final class Throttle {
        private final Cluster cluster;
        private final int limit;
        private final List<ObjectRef<Object>> inFlight = new ArrayList<>();

        Throttle(Cluster cluster, int limit) {
            this.cluster = cluster;
            this.limit = limit;
        }

        void beforeSubmit() {
            if (limit <= 0) {
                return;
            }
            while (inFlight.size() >= limit) {
                inFlight.removeIf(ObjectRef::isDone);
                if (inFlight.size() >= limit) {
                    cluster.wait(List.copyOf(inFlight), 1, Duration.ofSeconds(1));
                }
            }
        }

        @SuppressWarnings("unchecked")
        void submitted(ObjectRef<?> ref) {
            if (limit > 0) {
                inFlight.add((ObjectRef<Object>) ref);
            }
        }
    }

    private static long spilled(Cluster cluster) {
        return cluster.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesSpilled).sum();
    }

    private static long inMemory(Cluster cluster) {
        return cluster.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesInMemory).sum();
    }

    /** The task's own failure as the job's typed error (a bad shard, a content key, out of names...). */
    private static ReshardException failure(String what, Throwable e) {
        return ReshardDriver.failure(what, e, CroupierException.class);
    }

    /**
     * Settings of a {@link ReshardJob}: the {@link ReshardSpec} it runs, plus what a spec does
     * not describe and only a program can give (a base folder, a transform, a progress listener,
     * the metadata sort's tuning). {@link #build()} checks every knob.
     *
     * <p>Thread-safety: not thread-safe.
     */
    public static final class Builder {
        private final ReshardSpec spec;
        private Path base = Path.of("");
        private RecordTransform transform = RecordTransform.IDENTITY;
        private LocalReshard.OnError onError = LocalReshard.OnError.ABORT;
        private LongSupplier seedClock = System::currentTimeMillis;
        private ReshardProgress progress = ReshardProgress.NONE;
        private int sortPartitions;
        private int samplesPerShard = DEFAULT_SAMPLES_PER_SHARD;

        private Builder(ReshardSpec spec) {
            this.spec = spec;
        }

        /** @param dir folder relative names resolve against (default: the current folder) @return this */
        public Builder baseDir(Path dir) {
            this.base = dir;
            return this;
        }

        /** @param t applied to every record during creation (default: identity) @return this */
        public Builder transform(RecordTransform t) {
            this.transform = t;
            return this;
        }

        /** @param onError what to do with a corrupt input shard (default abort) @return this */
        public Builder onError(LocalReshard.OnError onError) {
            this.onError = onError;
            return this;
        }

        /** @param clock source of the shuffle seed when the spec has none (default: wall clock ms) @return this */
        public Builder seedClock(LongSupplier clock) {
            this.seedClock = clock;
            return this;
        }

        /** @param listener told as shards and partitions finish (default: nothing) @return this */
        public Builder progress(ReshardProgress listener) {
            this.progress = listener;
            return this;
        }

        /** @param partitions ranges of the metadata sort, 1..1000000; 0 (default) = two per live node, at most one per shard @return this */
        public Builder sortPartitions(int partitions) {
            this.sortPartitions = partitions;
            return this;
        }

        /** @param samples metadata records sampled per shard for splitters, 1..1048576 (default {@value #DEFAULT_SAMPLES_PER_SHARD}) @return this */
        public Builder samplesPerShard(int samples) {
            this.samplesPerShard = samples;
            return this;
        }

        /**
         * @return the job
         * @throws CroupierException {@link ErrorCode#BAD_INPUT} naming the knob, its value and
         *         what it needs, for the first bad setting
         */
        public ReshardJob build() {
            check(spec != null, "spec", null, "a ReshardSpec");
            check(base != null, "baseDir", null, "a folder");
            check(transform != null, "transform", null, "a RecordTransform (RecordTransform.IDENTITY for none)");
            check(onError != null, "onError", null, "ABORT or SKIP");
            check(seedClock != null, "seedClock", null, "a LongSupplier");
            check(progress != null, "progress", null, "a ReshardProgress (ReshardProgress.NONE for none)");
            check(sortPartitions >= 0 && sortPartitions <= 1_000_000, "sortPartitions", sortPartitions,
                    "0..1000000 (0 = two per live node)");
            check(samplesPerShard >= 1 && samplesPerShard <= 1 << 20, "samplesPerShard", samplesPerShard, "1..1048576");
            return new ReshardJob(this);
        }

        private static void check(boolean ok, String knob, Object value, String allowed) {
            if (!ok) {
                throw new CroupierException(ErrorCode.BAD_INPUT,
                        "ReshardJob.Builder." + knob + " = " + value + " is not allowed; needs " + allowed);
            }
        }
    }
}
