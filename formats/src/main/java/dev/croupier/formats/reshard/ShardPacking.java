package dev.croupier.formats.reshard;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts ordered records into output shards. By size: records are added in order until the
 * shard's content bytes reach the target, then the shard is closed; a record is never split,
 * so every shard but the last holds at least the target and at most one record's bytes over
 * it (its last record is the one that reached the target). By count: every shard but the last
 * holds exactly the target number of records. This is dSort's rule for {@code output_format}.
 *
 * <p>Thread-safety: stateless.
 */
public final class ShardPacking {
    private ShardPacking() {
    }

    /**
     * @param ordered records in output order
     * @param targetBytes the target content bytes per shard, &gt; 0
     * @return for each output shard, the index one past its last record (so shard i is
     *     {@code [ends[i-1], ends[i])}); empty for no records
     */
    public static int[] bySize(List<RecordMeta> ordered, long targetBytes) {
        if (targetBytes <= 0) {
            throw new IllegalArgumentException("targetBytes must be > 0, got " + targetBytes);
        }
        List<Integer> ends = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < ordered.size(); i++) {
            sum += ordered.get(i).size();
            if (sum >= targetBytes) {
                ends.add(i + 1);
                sum = 0;
            }
        }
        if (ends.isEmpty() ? !ordered.isEmpty() : ends.getLast() != ordered.size()) {
            ends.add(ordered.size());
        }
        return ends.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * @param ordered records in output order
     * @param targetRecords records per shard, &gt; 0
     * @return shard ends as in {@link #bySize}
     */
    public static int[] byCount(List<RecordMeta> ordered, long targetRecords) {
        if (targetRecords <= 0) {
            throw new IllegalArgumentException("targetRecords must be > 0, got " + targetRecords);
        }
        int n = ordered.size();
        int shards = (int) ((n + targetRecords - 1) / targetRecords);
        int[] ends = new int[shards];
        for (int i = 0; i < shards; i++) {
            ends[i] = (int) Math.min(n, (i + 1) * targetRecords);
        }
        return ends;
    }

    /**
     * dSort's rule when no size is given and the output template is bounded:
     * {@code ceil(total bytes / template names)}.
     *
     * @param ordered the records
     * @param names how many output names the template gives
     * @return the target size in bytes, at least 1
     */
    public static long autoSize(List<RecordMeta> ordered, long names) {
        long total = 0;
        for (RecordMeta m : ordered) {
            total += m.size();
        }
        return Math.max(1, (total + names - 1) / names);
    }
}
