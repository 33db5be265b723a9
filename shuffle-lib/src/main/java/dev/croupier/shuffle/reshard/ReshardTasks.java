package dev.croupier.shuffle.reshard;

import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.RecordTransform;
import dev.croupier.formats.reshard.internal.KeyMap;
import dev.croupier.formats.reshard.internal.RecordMeta;
import dev.croupier.formats.reshard.internal.RecordOrdering;
import dev.croupier.formats.reshard.internal.ReshardDriver;
import dev.croupier.formats.reshard.internal.ShardCreation;
import dev.croupier.formats.reshard.internal.ShardExtraction;
import dev.croupier.formats.reshard.internal.ShardPacking;
import java.io.IOException;
import java.io.Serial;
import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;

/**
 * Design note: the bodies of the reshard job's tasks, as static functions of plain values so
 * that each can be re-run by lineage reconstruction and none captures driver state beyond the
 * settings it is given. The phases follow AIStore dSort (extraction, metadata sorting,
 * creation), with dSort's centralised metadata sort replaced by a sample-based range-partitioned
 * sort on the shuffle library (as {@code SortJob} sorts fixed-size records): samples give R-1
 * splitters in {@link RecordOrdering#comparator} order, mappers cut each shard's metadata by
 * splitter, reducers order their range with {@link RecordOrdering#order}, so the concatenated
 * partitions are exactly the order a single process would produce. A seeded shuffle has no key
 * to range-partition on, so it sorts by one: a keyed hash of (seed, input shard, offset),
 * uniform over 64 bits, so fixed splitters cut it evenly without sampling. That is a uniformly
 * random permutation (ties, at 2^-64 per pair, fall back to extraction order) which depends
 * only on the seed and the input, not on the number of nodes or partitions; it is not the
 * Fisher-Yates permutation {@link RecordOrdering} gives in a single process.
 *
 * <p>Thread-safety: stateless.
 */
final class ReshardTasks {
    private ReshardTasks() {
    }

    /**
     * Extraction of one input shard.
     *
     * @return [extracted shard frame, metadata block, {@link ExtractionReport} frame]
     */
    static List<Object> extract(String shard, int index, boolean keepBytes, Reaction duplicates, String contentExtension)
            throws IOException {
        Path path = Path.of(shard);
        ShardFormat format = ShardFormat.forPath(path);
        long expected = format == ShardFormat.TAR ? Files.size(path) : 2 * Files.size(path);
        ExtractedShard.Writer sink = new ExtractedShard.Writer(keepBytes, expected);
        List<String> warnings = new ArrayList<>();
        List<RecordMeta> metas = ShardExtraction.extract(path, index, sink, duplicates, contentExtension, warnings::add);
        long bytes = 0;
        for (RecordMeta m : metas) {
            bytes += m.size();
        }
        return List.of(sink.finish(), MetaBlock.encode(metas), new ExtractionReport(metas.size(), bytes, warnings).encode());
    }

    /** Up to {@code samples} records of a shard's metadata, evenly spaced in extraction order. */
    static byte[] sample(byte[] block, int samples) {
        List<RecordMeta> all = MetaBlock.decode(block);
        if (all.size() <= samples) {
            return block;
        }
        List<RecordMeta> out = new ArrayList<>(samples);
        for (int i = 0; i < samples; i++) {
            out.add(all.get((int) ((long) i * all.size() / samples)));
        }
        return MetaBlock.encode(out);
    }

    /**
     * @param samples every sampled record
     * @param partitions R
     * @return R-1 splitters, in the algorithm's order
     */
    static List<RecordMeta> splitters(List<RecordMeta> samples, Algorithm algorithm, int partitions) {
        List<RecordMeta> sorted = new ArrayList<>(samples);
        sorted.sort(RecordOrdering.comparator(algorithm));
        List<RecordMeta> out = new ArrayList<>(partitions - 1);
        for (int i = 1; i < partitions && !sorted.isEmpty(); i++) {
            out.add(sorted.get((int) ((long) i * sorted.size() / partitions)));
        }
        return out;
    }

    /** Map: cuts one block of metadata into R blocks, by splitter (or by hash for a shuffle). */
    static List<byte[]> partition(byte[] block, int partitions, byte[] splitterBlock, Algorithm algorithm, long seed) {
        List<List<RecordMeta>> parts = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            parts.add(new ArrayList<>());
        }
        List<RecordMeta> splitters = MetaBlock.decode(splitterBlock);
        Comparator<RecordMeta> order = algorithm.kind() == Algorithm.Kind.SHUFFLE ? null : RecordOrdering.comparator(algorithm);
        for (RecordMeta m : MetaBlock.decode(block)) {
            int p;
            if (order == null) {
                // The top 31 bits of the key, scaled: partition ranges follow the key's unsigned order.
                p = (int) (((shuffleKey(seed, m) >>> 33) * partitions) >>> 31);
            } else {
                int i = Collections.binarySearch(splitters, m, order);
                p = i >= 0 ? i + 1 : -i - 1;
            }
            parts.get(p).add(m);
        }
        List<byte[]> out = new ArrayList<>(partitions);
        for (List<RecordMeta> part : parts) {
            out.add(MetaBlock.encode(part));
        }
        return out;
    }

    /** Reduce: orders one partition's records. */
    static byte[] order(List<byte[]> blocks, Algorithm algorithm, long seed) {
        List<RecordMeta> all = new ArrayList<>();
        for (byte[] b : blocks) {
            all.addAll(MetaBlock.decode(b));
        }
        if (algorithm.kind() == Algorithm.Kind.SHUFFLE) {
            all.sort(Comparator.<RecordMeta>comparingLong(m -> shuffleKey(seed, m) ^ Long.MIN_VALUE)
                    .thenComparing(RecordOrdering.EXTRACTION_ORDER));
            return MetaBlock.encode(all);
        }
        return MetaBlock.encode(RecordOrdering.order(all, algorithm, seed));
    }

    /** The shuffle's sort key: a keyed hash of the record's identity (input shard, offset). */
    static long shuffleKey(long seed, RecordMeta m) {
        return mix(mix(seed) ^ mix(((long) m.shard() << 40) ^ m.offset() ^ 0x9E3779B97F4A7C15L));
    }

    /** SplitMix64's finaliser: a bijective mix of 64 bits. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Planning of one sorted partition: resumes packing where the previous partition stopped.
     *
     * @param sorted the partition's sorted metadata
     * @param previous the previous partition's summary frame (its carried-out state is used)
     */
    static byte[] plan(byte[] sorted, byte[] previous, KeyMap keyMap, long target, boolean byCount,
                       Reaction missingKey) {
        long[] carryIn = PlanSummary.decode(previous).carryOut();
        ShardPacking cursor = new ShardPacking(keyMap, target, byCount, carryIn);
        Map<Long, long[]> sizes = new LinkedHashMap<>();
        Map<Long, BitSet> shards = new LinkedHashMap<>();
        List<String> warnings = new ArrayList<>();
        for (RecordMeta m : MetaBlock.decode(sorted)) {
            int t = cursor.place(m);
            if (t == ShardPacking.DROPPED) {
                ReshardDriver.unmapped(m, cursor.lastProblem(), missingKey, warnings::add);
                continue;
            }
            long id = ShardPacking.outputId(t, cursor.lastIndex());
            long[] s = sizes.computeIfAbsent(id, k -> new long[2]);
            s[0]++;
            s[1] += m.size();
            shards.computeIfAbsent(id, k -> new BitSet()).set(m.shard());
        }
        List<PlanSummary.Piece> pieces = new ArrayList<>(sizes.size());
        for (Map.Entry<Long, long[]> e : sizes.entrySet()) {
            long id = e.getKey();
            pieces.add(new PlanSummary.Piece(ShardPacking.templateOf(id), ShardPacking.indexOf(id), e.getValue()[0],
                    e.getValue()[1], shards.get(id).stream().toArray()));
        }
        return new PlanSummary(carryIn, cursor.carry(), pieces, warnings).encode();
    }

    /**
     * Routing of one sorted partition for the gather step: replays its packing (as
     * {@link #create} does) and lists, for each input shard being cut, where its records go.
     *
     * @param sorted the partition's sorted metadata
     * @param carryIn the packing state carried into it
     * @param cutShards the input shard indices being cut, ascending
     * @return one {@link Routes} frame per cut shard
     */
    static List<Object> route(byte[] sorted, long[] carryIn, int[] cutShards, KeyMap keyMap, long target,
                              boolean byCount) {
        List<LongStream.Builder> outputs = new ArrayList<>(cutShards.length);
        List<LongStream.Builder> handles = new ArrayList<>(cutShards.length);
        for (int i = 0; i < cutShards.length; i++) {
            outputs.add(LongStream.builder());
            handles.add(LongStream.builder());
        }
        ShardPacking cursor = new ShardPacking(keyMap, target, byCount, carryIn);
        for (RecordMeta m : MetaBlock.decode(sorted)) {
            int t = cursor.place(m);
            int at = Arrays.binarySearch(cutShards, m.shard());
            if (t != ShardPacking.DROPPED && at >= 0) {
                outputs.get(at).add(ShardPacking.outputId(t, cursor.lastIndex()));
                handles.get(at).add(m.handle());
            }
        }
        List<Object> out = new ArrayList<>(cutShards.length);
        for (int i = 0; i < cutShards.length; i++) {
            out.add(new Routes(outputs.get(i).build().toArray(), handles.get(i).build().toArray()).encode());
        }
        return out;
    }

    /**
     * The gather step for one extracted shard: cuts out, for each output shard created on another
     * node, just the records it takes, so only their bytes travel.
     *
     * @param extracted the extracted shard
     * @param routes this shard's {@link Routes} frames from every sorted partition, in partition order
     * @param outputs the ids of the output shards to cut for, ascending
     * @return one frame per output in {@code outputs}, its records in plan order
     */
    static List<Object> cut(MemorySegment extracted, List<byte[]> routes, long[] outputs) {
        long[][] handles = new long[outputs.length][16];
        int[] counts = new int[outputs.length];
        for (byte[] frame : routes) {
            Routes r = Routes.decode(frame);
            for (int i = 0; i < r.outputs().length; i++) {
                int o = Arrays.binarySearch(outputs, r.outputs()[i]);
                if (o >= 0) {
                    if (counts[o] == handles[o].length) {
                        handles[o] = Arrays.copyOf(handles[o], 2 * counts[o]);
                    }
                    handles[o][counts[o]++] = r.handles()[i];
                }
            }
        }
        List<Object> out = new ArrayList<>(outputs.length);
        for (int o = 0; o < outputs.length; o++) {
            out.add(ExtractedShard.select(extracted, handles[o], counts[o]));
        }
        return out;
    }

    /**
     * Creation of one output shard, left pending under a temporary name.
     *
     * @param parts the sorted partitions the shard spans, in order
     * @param extracted for each input shard of {@code order.shards()}, its extracted frame, or the
     *        frame {@link #cut} made of it for this output
     * @param order which shard, where, and from what
     * @return a {@link CreatedShard} frame
     */
    static byte[] create(List<byte[]> parts, List<MemorySegment> extracted, ShardOrder order, KeyMap keyMap,
                         long packTarget, boolean byCount, RecordTransform transform) throws IOException {
        int[] shardIds = order.shards();
        // A cut frame holds this shard's records in plan order, so its handles count up from 0.
        long[] nextCutHandle = new long[shardIds.length];
        List<RecordMeta> records = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            ShardPacking cursor = new ShardPacking(keyMap, packTarget, byCount, order.carries()[i]);
            for (RecordMeta m : MetaBlock.decode(parts.get(i))) {
                int t = cursor.place(m);
                if (t == order.template() && cursor.lastIndex() == order.index()) {
                    int at = Arrays.binarySearch(shardIds, m.shard());
                    if (at < 0) {
                        throw new IllegalStateException("record '" + m.key() + "' of input shard #" + m.shard()
                                + " was planned without its shard");
                    }
                    records.add(!order.cut()[at] ? m : new RecordMeta(m.key(), m.size(), m.shard(), m.offset(),
                            m.contentKey(), nextCutHandle[at]++));
                }
            }
        }
        ShardFormat format = ShardFormat.forExtension(order.extension()).orElseThrow(
                () -> new IllegalStateException("no format for extension " + order.extension()));
        ShardCreation.Created c = ShardCreation.create(records,
                m -> ExtractedShard.load(extracted.get(Arrays.binarySearch(shardIds, m.shard())), m.key(), m.handle()),
                format, Path.of(order.path()), transform);
        if (Thread.currentThread().isInterrupted()) {
            // Cancelled, or its node died while it wrote (the shard writer's streams ignore
            // interrupts): nobody will commit or discard this file by name, so remove it here.
            Files.deleteIfExists(c.pending().temporary());
            throw new java.io.InterruptedIOException("creation of " + order.path() + " was interrupted");
        }
        return new CreatedShard(c.pending().temporary().toString(), c.pending().size(), c.records(), c.contentBytes())
                .encode();
    }

    /**
     * What one creation task is to make. A task argument, not a result: arguments travel with
     * the task's code, whose allow-list takes Croupier's own classes.
     *
     * @param template the shard's template (0 without a key map)
     * @param index its index within the template
     * @param path its final path
     * @param extension the extension naming its format
     * @param carries the packing state carried into each sorted partition it spans, in order
     * @param shards the input shard indices its records come from, ascending
     * @param cut for each of {@code shards}, whether its frame is one {@link #cut} made for this
     *        shard (else the whole extracted shard)
     */
    record ShardOrder(int template, long index, String path, String extension, long[][] carries, int[] shards,
                      boolean[] cut) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }

    /**
     * What extracting one input shard found besides its frame and metadata.
     *
     * @param records how many records
     * @param bytes their content bytes
     * @param warnings one line each (duplicates, skipped entries)
     */
    record ExtractionReport(long records, long bytes, List<String> warnings) {
        byte[] encode() {
            TaskFrame.Writer w = new TaskFrame.Writer().putLong(records).putLong(bytes).putInt(warnings.size());
            warnings.forEach(w::putString);
            return w.toBytes();
        }

        static ExtractionReport decode(byte[] frame) {
            TaskFrame.Reader r = new TaskFrame.Reader(frame, "extraction report");
            long records = r.getLong();
            long bytes = r.getLong();
            List<String> warnings = new ArrayList<>();
            for (int i = r.getInt(); i > 0; i--) {
                warnings.add(r.getString());
            }
            return new ExtractionReport(records, bytes, List.copyOf(warnings));
        }
    }

    /**
     * Where one sorted partition sends the records of one input shard being cut: record
     * {@code i} (in plan order) has handle {@code handles[i]} and goes to output shard
     * {@code outputs[i]} (a {@link ShardPacking#outputId}). Two arrays, not an object per record.
     *
     * @param outputs output ids
     * @param handles record handles in the extracted shard, as many as {@code outputs}
     */
    record Routes(long[] outputs, long[] handles) {
        Routes {
            if (outputs.length != handles.length) {
                throw new IllegalArgumentException(outputs.length + " outputs for " + handles.length + " handles");
            }
        }

        byte[] encode() {
            TaskFrame.Writer w = new TaskFrame.Writer().putInt(outputs.length);
            for (int i = 0; i < outputs.length; i++) {
                w.putLong(outputs[i]).putLong(handles[i]);
            }
            return w.toBytes();
        }

        static Routes decode(byte[] frame) {
            TaskFrame.Reader r = new TaskFrame.Reader(frame, "routes");
            int n = r.getInt();
            long[] outputs = new long[n];
            long[] handles = new long[n];
            for (int i = 0; i < n; i++) {
                outputs[i] = r.getLong();
                handles[i] = r.getLong();
            }
            return new Routes(outputs, handles);
        }
    }

    /**
     * One output shard written under a temporary name, for the driver to commit or discard.
     *
     * @param temporary the temporary file
     * @param fileBytes its size
     * @param records records written (after the transform)
     * @param contentBytes their content bytes
     */
    record CreatedShard(String temporary, long fileBytes, long records, long contentBytes) {
        byte[] encode() {
            return new TaskFrame.Writer().putString(temporary).putLong(fileBytes).putLong(records).putLong(contentBytes)
                    .toBytes();
        }

        static CreatedShard decode(byte[] frame) {
            TaskFrame.Reader r = new TaskFrame.Reader(frame, "created shard");
            return new CreatedShard(r.getString(), r.getLong(), r.getLong(), r.getLong());
        }
    }
}
