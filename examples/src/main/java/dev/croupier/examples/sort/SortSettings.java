package dev.croupier.examples.sort;

import dev.croupier.examples.Options;
import dev.croupier.examples.UsageException;
import dev.croupier.futures.Cluster;
import dev.croupier.shuffle.Strategy;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * The options {@code sort} and {@code sort-benchmark} share, parsed and checked: the strategy,
 * the embedded cluster's shape, the partition count and the report format. Immutable.
 */
record SortSettings(Strategy strategy, int nodes, int partitions, int mappers, long storeMemory, Path spillDir,
                    boolean json) {

    static final Set<String> VALUED = Set.of("strategy", "nodes", "partitions", "mappers", "store-memory", "spill-dir");
    static final Set<String> FLAGS = Set.of("json");

    static final String USAGE = """
              --strategy simple|riffle|magnet|push|auto   shuffle strategy (default auto)
              --nodes N             embedded nodes (default 4)
              --partitions P        reduce tasks / key ranges (default: as many as mappers)
              --mappers M           map tasks (default: one per 64 MiB of input)
              --store-memory SIZE   object-store memory per node, k/m/g suffixes (default 512m)
              --spill-dir DIR       where stores spill and temporary files go (default: the system temp folder)
              --json                print the final report as one JSON object on stdout""";

    static SortSettings parse(Options o) {
        String name = o.string("strategy", "auto").toLowerCase(Locale.ROOT);
        Strategy strategy = switch (name) {
            case "simple" -> Strategy.SIMPLE;
            case "riffle" -> Strategy.RIFFLE;
            case "magnet" -> Strategy.MAGNET;
            case "push" -> Strategy.PUSH_PIPELINED;
            case "auto" -> Strategy.AUTO;
            default -> throw new UsageException("--strategy = '" + name + "' is not one of simple, riffle, magnet, push, auto");
        };
        return new SortSettings(strategy,
                o.integer("nodes", 4, 1, 1024),
                o.integer("partitions", 0, 1, 1_000_000),
                o.integer("mappers", 0, 1, 1_000_000),
                o.size("store-memory", Cluster.Builder.DEFAULT_OBJECT_STORE_BYTES, 1L << 20, 1L << 42),
                Path.of(o.string("spill-dir", System.getProperty("java.io.tmpdir"))),
                o.flag("json"));
    }

    Cluster startCluster() {
        return Cluster.builder().nodes(nodes).objectStoreBytes(storeMemory).spillDirectory(spillDir).start();
    }
}
