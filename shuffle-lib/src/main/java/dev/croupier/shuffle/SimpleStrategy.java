package dev.croupier.shuffle;

import dev.croupier.futures.ObjectRef;
import java.util.List;

/**
 * SIMPLE: M map tasks each split their input into R blocks; R reduce tasks each pull one block
 * from every mapper. All tasks are submitted at once (the runtime starts each reducer when its
 * blocks exist), so the driver never waits unless speculation or skew splitting asks it to.
 *
 * <pre>
 *   map 0 --+--> reduce 0
 *   map 1 --+--> reduce 1      M x R blocks
 *   ...   --+--> ...
 * </pre>
 */
final class SimpleStrategy<I, B, O> {
    private final ShuffleRun<I, B, O> run;

    SimpleStrategy(ShuffleRun<I, B, O> run) {
        this.run = run;
    }

    List<PartitionOutput<O>> run() {
        List<List<ObjectRef<B>>> maps = run.submitMaps(0, run.plan.mappers(), 0);
        List<PartitionOutput<O>> outputs = run.submitReduces(ShuffleRun.byPartition(maps, run.plan.partitions()));
        // The reduce tasks hold the blocks they need; the driver's claims can go.
        ShuffleRun.releaseAll(maps);
        return outputs;
    }
}
