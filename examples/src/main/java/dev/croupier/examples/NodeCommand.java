package dev.croupier.examples;

import dev.croupier.futures.Cluster;
import dev.croupier.futures.NodeServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code croupier node}: runs this process as a node ({@link NodeServer#main}) that drivers use
 * with {@code --cluster HOST:PORT}. The options are checked here, in the command line's words,
 * and handed to the node as it takes them. {@code --classpath} is applied by {@code bin/croupier},
 * which puts it on the JVM's class path: the node reads task functions by Java serialization,
 * which finds classes with the application class loader, and that loader's path is fixed at
 * launch.
 */
final class NodeCommand implements CroupierCli.Command {

    private static final String USAGE = """
            usage: croupier node --port P [options]
              Runs a node: an object store and CPU slots that run tasks for drivers naming it in
              --cluster HOST:PORT. Prints 'croupier node listening on HOST:PORT' once it serves, and
              serves until SIGTERM, which drains it (no new tasks, what runs finishes) and exits 0,
              or SIGINT (Ctrl-C), which stops it at once.
              --port P              port to serve on; 0 for any free one (printed)
              --bind ADDR           address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: all)
              --store-memory SIZE   object-store memory, k/m/g suffixes (default: 30% of the memory
                                    available, used only as filled); beyond it values spill
              --spill-dir DIR       where the store spills (default: the system temp folder)
              --memory-dir DIR      folder of the store's shared-memory file (default /dev/shm where it exists)
              --cpus N              CPU slots: tasks run at once (default: the machine's processors)
              --classpath CP        jars and folders (':'-separated) of the drivers' task classes; bin/croupier
                                    puts them on the node's class path
              --token-file F        a file holding the token every call must carry (default: CROUPIER_TOKEN;
                                    a node with no token binds only loopback)
              --tls-cert F --tls-key F   serve TLS with this certificate chain and PKCS#8 key (PEM)
              --tls-ca F            the certificate authority trusted when pulling from TLS nodes
                                    (default: CROUPIER_TLS_CA)
              --drain-seconds N     on SIGTERM, how long running and queued tasks may take to finish
                                    (default 20)
              --metrics-port P      serve Prometheus text at /metrics on this port of the bind address
              --parent PID          stop (exit 0) when process PID ends, as a supervisor's child does; bin/croupier
                                    passes its own while the node's first run records its start-up cache""";

    static final Set<String> VALUED = Set.of("port", "bind", "store-memory", "spill-dir", "memory-dir", "cpus",
            "classpath", "token-file", "tls-cert", "tls-key", "tls-ca", "drain-seconds", "metrics-port", "parent");

    @Override
    public int run(String[] args) throws InterruptedException {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("node", args, Set.of(), VALUED);
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        if (o.string("port", null) == null) {
            throw new UsageException("needs --port P (0 for any free port)");
        }
        for (String entries : o.strings("classpath")) {
            for (String entry : entries.split(File.pathSeparator)) {
                // java expands a trailing '*' to the folder's jars; the folder must exist
                Path p = Path.of(entry.endsWith("*") ? entry.substring(0, entry.length() - 1) + "." : entry);
                if (!entry.isEmpty() && !Files.exists(p)) {
                    throw new UsageException("--classpath entry '" + entry + "' does not exist");
                }
            }
        }
        List<String> node = new ArrayList<>(List.of("--port", Integer.toString(o.integer("port", 0, 0, 65535))));
        if (o.string("store-memory", null) != null) {
            node.addAll(List.of("--store-memory", Long.toString(o.size("store-memory",
                    0, 1L << 20, 1L << 42))));
        }
        if (o.string("cpus", null) != null) {
            node.addAll(List.of("--cpus", Integer.toString(o.integer("cpus", 1, 1, 4096))));
        }
        if (o.string("metrics-port", null) != null) {
            node.addAll(List.of("--metrics-port", Integer.toString(o.integer("metrics-port", 0, 0, 65535))));
        }
        if (o.string("parent", null) != null) {
            node.addAll(List.of("--parent", Long.toString(o.longValue("parent", 0, 1, Long.MAX_VALUE))));
        }
        if (o.string("drain-seconds", null) != null) {
            node.addAll(List.of("--drain-seconds", Integer.toString(o.integer("drain-seconds",
                    NodeServer.DEFAULT_DRAIN_SECONDS, 0, 3600))));
        }
        for (String passed : List.of("bind", "spill-dir", "memory-dir", "token-file", "tls-cert", "tls-key", "tls-ca")) {
            if (o.string(passed, null) != null) {
                node.addAll(List.of("--" + passed, o.string(passed, null)));
            }
        }
        NodeServer.main(node.toArray(String[]::new));
        return 0;
    }
}
