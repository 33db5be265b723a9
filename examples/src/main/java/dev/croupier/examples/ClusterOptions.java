package dev.croupier.examples;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.DefaultStoreSize;
import dev.croupier.futures.ClusterStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntToLongFunction;

/**
 * The cluster a job subcommand runs on, as its options say: an embedded cluster of
 * {@code --nodes N} in this JVM (the default), {@code --processes N} node processes started on
 * this machine and stopped at the end, or the running nodes ({@code croupier node}) at
 * {@code --cluster HOST:PORT[,HOST:PORT...]}. Every job subcommand parses these options and
 * starts its cluster here, so they mean the same everywhere. Immutable.
 *
 * @param nodes embedded nodes; 0 with {@code --processes} or {@code --cluster}
 * @param processes node processes to start; 0 for none
 * @param addresses running nodes to connect to; empty for none
 * @param storeMemory object-store bytes of each node this command starts; 0 with {@code --cluster}
 * @param spillDir where the stores of the nodes this command starts spill
 * @param metricsPort the port of this driver's /metrics; -1 for none
 * @param storeSizing why the store memory is what it is when it was not given (for reports), else null
 */
public record ClusterOptions(int nodes, int processes, List<String> addresses, long storeMemory, Path spillDir,
                             int metricsPort, String storeSizing) {

    /** How the usage states the machine's default store memory ({@link #parse(Options, int)}). */
    public static final String MACHINE_DEFAULT = "30% of available memory / N";

    /** The valued options read here. */
    private static final List<String> VALUED = List.of("nodes", "processes", "cluster", "store-memory", "spill-dir",
            "metrics-port");

    public ClusterOptions {
        addresses = List.copyOf(addresses);
    }

    /** A command's own valued options and these, for {@link Options#parse}. */
    public static Set<String> valuedWith(String... own) {
        Set<String> all = new HashSet<>(VALUED);
        all.addAll(List.of(own));
        return Set.copyOf(all);
    }

    /**
     * The help lines of these options, aligned with a command's other lines (the description at
     * column 24).
     *
     * @param defaultStoreMemory how the command's help states the default, e.g. {@code 512m}
     */
    public static String usage(int defaultNodes, String defaultStoreMemory) {
        return String.join("\n",
                line("--nodes N", "nodes of an embedded cluster, in this JVM (default " + defaultNodes + ")"),
                line("--processes N", "run N node processes on this machine instead, stopped at the end"),
                line("--cluster ADDRS", "use running nodes (croupier node), with their own store settings, instead:"
                        + " HOST:PORT[,HOST:PORT...]; a name that resolves to several addresses is that many"
                        + " nodes, and names are resolved again every second, so nodes that come or go join or"
                        + " leave mid-job"),
                line("--store-memory SIZE", "object-store memory per node, k/m/g suffixes (default " + defaultStoreMemory
                        + ")"),
                line("--spill-dir DIR", "where the stores spill (default: the system temp folder)"),
                line("--metrics-port P", "serve this driver's Prometheus text at http://127.0.0.1:P/metrics"));
    }

    private static String line(String option, String description) {
        return String.format(Locale.ROOT, "  %-22s%s", option, description);
    }

    /**
     * Reads the cluster options of {@code o}, refusing combinations that contradict each other;
     * a node's store memory is the machine's default ({@link DefaultStoreSize}) unless given, and
     * {@link #storeSizing} says why.
     */
    public static ClusterOptions parse(Options o, int defaultNodes) {
        return read(o, defaultNodes, null);
    }

    /**
     * Reads the cluster options of {@code o}, refusing combinations that contradict each other.
     *
     * @param defaultStoreMemory the default object-store bytes of each node, given the number of
     *     nodes this command starts
     */
    public static ClusterOptions parse(Options o, int defaultNodes, IntToLongFunction defaultStoreMemory) {
        return read(o, defaultNodes, java.util.Objects.requireNonNull(defaultStoreMemory, "defaultStoreMemory"));
    }

    /** {@link #parse}, with the machine's default store memory where {@code defaultStoreMemory} is null. */
    private static ClusterOptions read(Options o, int defaultNodes, IntToLongFunction defaultStoreMemory) {
        boolean embedded = o.string("processes", null) == null && o.string("cluster", null) == null;
        Path spillDir = Path.of(o.string("spill-dir", System.getProperty("java.io.tmpdir")));
        int metricsPort = o.string("metrics-port", null) == null ? -1 : o.integer("metrics-port", 0, 0, 65535);
        if (o.string("cluster", null) != null) {
            if (o.string("processes", null) != null) {
                throw new UsageException("--cluster and --processes exclude each other: use running nodes, or start"
                        + " N of them");
            }
            refuseWith(o, "cluster", "nodes", "its nodes are those at its addresses");
            refuseWith(o, "cluster", "store-memory", "its nodes have their own (croupier node --store-memory)");
            return new ClusterOptions(0, 0, addresses(o.string("cluster", null)), 0, spillDir, metricsPort, null);
        }
        if (!embedded) {
            refuseWith(o, "processes", "nodes", "--processes N runs N nodes");
        }
        int processes = o.integer("processes", 0, 1, 1024);
        int nodes = embedded ? o.integer("nodes", defaultNodes, 1, 1024) : 0;
        int perMachine = embedded ? nodes : processes;
        long storeMemory;
        String sizing = null;
        if (o.string("store-memory", null) != null) {
            storeMemory = o.size("store-memory", 0, 1L << 20, 1L << 42);
        } else if (defaultStoreMemory != null) {
            storeMemory = defaultStoreMemory.applyAsLong(perMachine);
        } else {
            DefaultStoreSize machine = DefaultStoreSize.forNodes(perMachine);
            storeMemory = machine.bytesPerNode();
            sizing = machine.reason();
        }
        return new ClusterOptions(nodes, processes, List.of(), storeMemory, spillDir, metricsPort, sizing);
    }

    /** Refuses {@code --other} beside {@code --chosen}, which gives it no meaning. */
    private static void refuseWith(Options o, String chosen, String other, String why) {
        if (o.string(other, null) != null) {
            throw new UsageException("--" + other + " does not go with --" + chosen + ": " + why);
        }
    }

    /**
     * The addresses of {@code --cluster}: comma-separated {@code HOST:PORT}s, each checked here
     * so that a typo is named before any work starts.
     */
    static List<String> addresses(String raw) {
        List<String> out = new ArrayList<>();
        for (String part : raw.split(",", -1)) {
            String address = part.trim();
            int colon = address.lastIndexOf(':');
            int port = -1;
            if (colon > 0) {
                try {
                    port = Integer.parseInt(address.substring(colon + 1));
                } catch (NumberFormatException notANumber) {
                    // named below
                }
            }
            if (port < 1 || port > 65535) {
                throw new UsageException("--cluster: '" + address + "' is not HOST:PORT (a port 1..65535)");
            }
            out.add(address);
        }
        return out;
    }

    /**
     * What failures cost a job so far, as the {@code --json} reports of the job subcommands
     * name it: {@code retried_tasks}, {@code rebuilt_objects}, {@code nodes_lost} and
     * {@code detection_seconds} (per lost node, from its last word to its detection).
     */
    public static Map<String, Object> failureReport(Cluster cluster) {
        ClusterStats.Failures f = cluster.stats().failures();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("retried_tasks", f.retriedTasks());
        report.put("rebuilt_objects", f.rebuiltObjects());
        report.put("nodes_lost", f.nodesLost());
        report.put("detection_seconds", f.detectionSeconds());
        return report;
    }

    /** Starts the cluster these options describe; the caller closes it. */
    public Cluster start() {
        Cluster.Builder b = Cluster.builder().metricsPort(metricsPort);
        if (!addresses.isEmpty()) {
            return b.connect(addresses.toArray(String[]::new)).start();
        }
        b.objectStoreBytes(storeMemory).spillDirectory(spillDir);
        return (processes > 0 ? b.processes(processes) : b.nodes(nodes)).start();
    }
}
