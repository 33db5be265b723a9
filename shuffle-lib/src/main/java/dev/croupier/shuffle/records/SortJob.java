package dev.croupier.shuffle.records;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.shuffle.SegmentPackMapper;
import dev.croupier.shuffle.ShuffleJob;
import dev.croupier.shuffle.ShuffleResult;
import dev.croupier.shuffle.Strategy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Sort of fixed-size records by key (bytewise unsigned, or a user {@link KeyComparator}):
 * sample-based range partitioning, then a shuffle whose
 * mappers cut their input by splitter, whose merges concatenate, and whose reducers radix-sort
 * each range. The outputs, in partition order, are the sorted records.
 *
 * <pre>
 *   sample tasks (a few keys per input) -> splitters on the driver
 *   map i:    read input i, partition by splitters      (R blocks)
 *   [merge]:  concatenate blocks of a partition         (RIFFLE, MAGNET, PUSH_PIPELINED)
 *   reduce r: sort every record of range r              (one sorted block, or written to a file)
 * </pre>
 *
 * <p>{@link #run} leaves the sorted ranges in the cluster as objects. {@link #runInto} and
 * {@link #runIntoParts} have every reducer write its range straight to disk instead, from the
 * node that sorted it, so an out-of-core sort never stores, spills or fetches its output: for
 * one file, reducer {@code r} writes at its range's position (the bytes of all lower ranges,
 * which the map tasks report), all reducers in parallel. A reducer sorts its whole range into
 * task memory placed so that the range's whole pages go to the file with {@code O_DIRECT}
 * ({@link DirectRangeIo}), then writes it with one call.
 *
 * Immutable; {@link #run} may be called more than once.
 */
public final class SortJob {

    /** Default bytes of input per map task when the input is a file: 64 MiB. */
    public static final long DEFAULT_BYTES_PER_MAPPER = 64L << 20;
    /** Default number of keys sampled from each map input. */
    public static final int DEFAULT_SAMPLES_PER_MAPPER = 128;
    /**
     * Default partitions (reduce tasks) per map task: two, so a reducer sorts half a map
     * input's bytes (32 MiB by default). Twice as many reducers as maps keep a cluster's slots
     * evenly busy through the reduce phase's last waves; against one per map, alternating:
     * {@code sort-benchmark --in-memory} 936-1,057 against 884-968 MB/s, 4 GiB on disk 7.73 and
     * 8.41 s against 8.14 and 9.65 s, out of core and the 1 GB file sort level; on three node
     * processes the 1 GB sort was 0.1-0.2 s slower, each reducer borrowing its pieces from the
     * other nodes with a call apiece (docs/benchmarks.md, "Two reducers per map").
     */
    public static final int DEFAULT_PARTITIONS_PER_MAPPER = 2;

    /** The checked settings, copied out of the builder so the job never changes. */
    private record Settings(RecordLayout layout, KeyComparator order, Path file, List<ObjectRef<MemorySegment>> inputs,
                            int mappers, int partitions, int samplesPerMapper, Strategy strategy, String name,
                            Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, ?>> tuning) {}

    private final Settings b;

    private SortJob(Settings settings) {
        this.b = settings;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Samples, then runs the shuffle; returns when every reduce task is submitted. Output
     * {@code r} is range {@code r}, sorted, as one block in the cluster.
     */
    public ShuffleResult<MemorySegment> run(Cluster cluster) {
        RecordLayout layout = b.layout;
        KeyComparator order = b.order;
        return run(cluster, (ShuffleJob.Builder<MemorySegment, MemorySegment, MemorySegment> shuffle) ->
                shuffle.reducer((int p, List<MemorySegment> blocks) -> RecordKernels.sort(layout, blocks, order)));
    }

    /**
     * Like {@link #run}, but reducer {@code r} writes its sorted range into {@code file} at the
     * range's byte position, so the file ends up holding every record in order. The file must
     * exist and be writable from every node (on an embedded cluster, any local file); reducers
     * write, in place, only their own range, and a re-run reducer rewrites the same bytes.
     * Returns once every reduce task is submitted (after every map task is done: the positions
     * need every map's block sizes); output {@code r} is the number of bytes range {@code r}
     * wrote. Forcing the file to disk and committing it (rename) are the caller's.
     */
    public ShuffleResult<Long> runInto(Cluster cluster, Path file) {
        if (!Files.isRegularFile(file)) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "sort output " + file + " is not an existing file");
        }
        RecordLayout layout = b.layout;
        KeyComparator order = b.order;
        String path = file.toString(); // a Path is not serializable; tasks carry its string
        return run(cluster, (ShuffleJob.Builder<MemorySegment, MemorySegment, Long> shuffle) ->
                shuffle.outputBytes(0).positionedReducer(MemorySegment::byteSize,
                        (int p, long position, List<MemorySegment> blocks) ->
                                sortAndWrite(layout, blocks, order, path, position, false)));
    }

    /**
     * Like {@link #run}, but reducer {@code r} writes its sorted range to its own file,
     * {@code dir} resolved with {@code String.format(nameFormat, r)} (for example
     * {@code "part-%05d"}), created or replaced, and forced to disk. Output {@code r} is the
     * number of bytes it wrote. Renaming the parts into place is the caller's.
     */
    public ShuffleResult<Long> runIntoParts(Cluster cluster, Path dir, String nameFormat) {
        if (!Files.isDirectory(dir)) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "sort output folder " + dir + " is not an existing folder");
        }
        RecordLayout layout = b.layout;
        KeyComparator order = b.order;
        String folder = dir.toString();
        return run(cluster, (ShuffleJob.Builder<MemorySegment, MemorySegment, Long> shuffle) ->
                shuffle.outputBytes(0).reducer((int p, List<MemorySegment> blocks) -> sortAndWrite(layout, blocks, order,
                        Path.of(folder, String.format(Locale.ROOT, nameFormat, p)).toString(), 0, true)));
    }

    private <O> ShuffleResult<O> run(Cluster cluster,
                                     Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, O>> reducer) {
        RecordLayout layout = b.layout;
        int keyBytes = layout.keyBytes();
        int mappers = b.mappers;
        int partitions = b.partitions > 0 ? b.partitions : DEFAULT_PARTITIONS_PER_MAPPER * mappers;
        int samples = Math.max(b.samplesPerMapper, 4 * partitions / mappers + 1);
        FileRanges ranges = b.file == null ? null : FileRanges.of(b.file, layout, mappers);

        List<ObjectRef<MemorySegment>> sampled = new ArrayList<>(mappers);
        for (int i = 0; i < mappers; i++) {
            int range = i;
            long seed = 0x5A3D1E5L * (i + 1);
            sampled.add(ranges != null
                    ? cluster.task(() -> ranges.sampleKeys(range, keyBytes, samples, seed)).name(b.name + "-sample").remote()
                    : cluster.task((MemorySegment in) -> RecordKernels.sampleKeys(layout, in, samples, seed), b.inputs.get(i))
                            .name(b.name + "-sample").remote());
        }
        Splitters splitters = Splitters.fromSamples(cluster.get(sampled), keyBytes, partitions, b.order);
        sampled.forEach(ObjectRef::release);

        ShuffleJob.Builder<MemorySegment, MemorySegment, O> shuffle =
                ShuffleJob.<MemorySegment, MemorySegment, O>builder()
                        .name(b.name)
                        .packedMapper((SegmentPackMapper<MemorySegment>) (i, in, r, packs) -> RecordKernels.partition(layout, in, splitters, packs))
                        .merger((int p, List<MemorySegment> blocks) -> RecordKernels.concat(blocks))
                        .partitions(partitions)
                        .strategy(b.strategy);
        reducer.accept(shuffle);
        if (ranges != null) {
            shuffle.source(mappers, ranges::read).inputBytes(ranges.bytes());
        } else {
            shuffle.inputs(b.inputs);
        }
        b.tuning.accept(shuffle);
        return shuffle.build().run(cluster);
    }

    /**
     * Sorts {@code blocks} into task memory placed for a direct write and writes them into file
     * {@code path} at {@code position}; with {@code create}, the file is created or truncated
     * first and forced to disk after. The task holds its sorted range whole, as big again as its
     * inputs: writing it chunk by chunk would need a few MiB instead, but only the one gather in
     * random order can fill chunks in sequence, and that gather was over a third of the node threads' CPU
     * in a 1 GB sort (docs/benchmarks.md, "The file sort's reducers sort bucketed").
     */
    private static long sortAndWrite(RecordLayout layout, List<MemorySegment> blocks, KeyComparator order, String path,
                                     long position, boolean create) throws IOException {
        MemorySegment sorted = DirectRangeIo.allocateFor(position, RecordKernels.bytes(layout, blocks));
        RecordKernels.sortInto(layout, blocks, order, sorted);
        return DirectRangeIo.write(path, position, sorted, create);
    }

    /** Settings of a sort, checked by {@link #build()}. Not thread-safe. */
    public static final class Builder extends RecordJobBuilder<Builder> {
        private RecordLayout layout = RecordLayout.SORT_BENCHMARK;
        private KeyComparator order;
        private Path file;
        private int mappers;
        private int samplesPerMapper = DEFAULT_SAMPLES_PER_MAPPER;
        private Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, ?>> tuning = s -> {};

        private Builder() {
            super("SortJob", "sort");
        }

        /** Record size and key size (default: the Sort Benchmark's 100-byte records, 10-byte keys). */
        public Builder layout(RecordLayout layout) {
            this.layout = Objects.requireNonNull(layout, "layout");
            return this;
        }

        /** Orders keys with {@code order} instead of bytewise unsigned (null restores bytewise). */
        public Builder comparator(KeyComparator order) {
            this.order = order;
            return this;
        }

        /** Sort the records of a file, cut into whole-record ranges, one per mapper. */
        public Builder inputFile(Path file) {
            this.file = Objects.requireNonNull(file, "inputFile");
            return this;
        }

        /** Map tasks for a file input (default: one per 64 MiB). */
        public Builder mappers(int mappers) {
            this.mappers = mappers;
            return this;
        }

        public Builder samplesPerMapper(int samples) {
            this.samplesPerMapper = samples;
            return this;
        }

        /** Further settings of the underlying shuffle (rounds, merge factor, speculation, skew...). */
        public Builder tuning(Consumer<ShuffleJob.Builder<MemorySegment, MemorySegment, ?>> tuning) {
            this.tuning = Objects.requireNonNull(tuning, "tuning");
            return this;
        }

        public SortJob build() {
            int mappers = this.mappers;
            if ((file == null) == (inputs == null)) {
                throw bad("inputFile/inputs", file == null ? "neither" : "both", "exactly one of them");
            }
            if (file != null && mappers == 0) {
                long bytes;
                try {
                    bytes = java.nio.file.Files.size(file);
                } catch (java.io.IOException e) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, "inputFile " + file + " cannot be read: " + e, e);
                }
                mappers = (int) Math.max(1, (bytes + DEFAULT_BYTES_PER_MAPPER - 1) / DEFAULT_BYTES_PER_MAPPER);
            } else if (inputs != null) {
                if (mappers != 0 && mappers != inputs.size()) {
                    throw bad("mappers", mappers, "the number of inputs (" + inputs.size() + ") or unset");
                }
                mappers = inputs.size();
            }
            if (mappers < 1 || mappers > 1_000_000) {
                throw bad("mappers", mappers, "1..1000000");
            }
            checkPartitions();
            if (samplesPerMapper < 1 || samplesPerMapper > 1 << 20) {
                throw bad("samplesPerMapper", samplesPerMapper, "1..1048576");
            }
            return new SortJob(new Settings(layout, order, file, inputs, mappers, partitions, samplesPerMapper,
                    strategy, name, tuning));
        }
    }
}
