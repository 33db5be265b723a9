package dev.croupier.examples.sort;

import dev.croupier.examples.ClusterOptions;
import dev.croupier.examples.Options;
import dev.croupier.futures.Cluster;
import dev.croupier.shuffle.Strategy;
import java.util.Set;

/**
 * The options {@code sort} and {@code sort-benchmark} share, parsed and checked: the strategy,
 * the cluster, the partition count and the report format. Immutable.
 */
record SortSettings(Strategy strategy, ClusterOptions cluster, int partitions, int mappers, boolean json) {

    static final Set<String> VALUED = ClusterOptions.valuedWith("strategy", "partitions", "mappers");
    static final Set<String> FLAGS = Set.of("json");

    static final String USAGE = """
              --strategy simple|riffle|magnet|push|auto   shuffle strategy (default auto)
              --partitions P        reduce tasks / key ranges (default: two per mapper)
              --mappers M           map tasks (default: one per 64 MiB of input)
            """ + ClusterOptions.usage(4, ClusterOptions.MACHINE_DEFAULT)
            + "\n  --json                print the final report as one JSON object on stdout";

    static SortSettings parse(Options o) {
        return new SortSettings(o.strategy("strategy", Strategy.AUTO),
                ClusterOptions.parse(o, 4),
                o.integer("partitions", 0, 1, 1_000_000),
                o.integer("mappers", 0, 1, 1_000_000),
                o.flag("json"));
    }
}
