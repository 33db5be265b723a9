package dev.croupier.futures;

import dev.croupier.futures.internal.MetricsEndpoint;
import dev.croupier.futures.internal.NodeService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A node process: one object store and its CPU slots, serving tasks and objects to any number
 * of drivers ({@link Cluster#connect}) over gRPC until it is closed or the process gets SIGTERM
 * or SIGINT. {@code bin/croupier node} and {@code Cluster.builder().processes(n)} run
 * {@link #main}.
 *
 * <p>Thread-safe.
 */
public final class NodeServer implements AutoCloseable {

    /** What a node prints on its standard output once it serves, followed by its address. */
    public static final String READY = "croupier node listening on ";

    private final NodeService service;
    /** Prometheus text at /metrics, or null without {@link Builder#metricsPort}. */
    private final MetricsEndpoint metrics;

    private NodeServer(NodeService service, MetricsEndpoint metrics) {
        this.service = service;
        this.metrics = metrics;
    }

    /** The port of the node's /metrics, or -1 if it serves none. */
    public int metricsPort() {
        return metrics == null ? -1 : metrics.port();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code host:port} the node serves on. */
    public String address() {
        return service.address();
    }

    /** Blocks until the node stops. */
    public void awaitTermination() throws InterruptedException {
        service.awaitTermination();
    }

    /**
     * Stops taking work and lets what runs finish, for at most {@code bound}: readiness turns
     * NOT_SERVING, drivers are told to place nothing more here, and this returns once the node
     * runs and queues no task (true) or the bound passes (false). Then {@link #close} it; what
     * it still holds is lost, and the drivers rebuild it from lineage. SIGTERM does both.
     */
    public boolean drain(java.time.Duration bound) throws InterruptedException {
        return service.drain(Objects.requireNonNull(bound, "bound"));
    }

    /** Stops serving, interrupts running tasks and frees the store's memory and files. */
    @Override
    public void close() {
        if (metrics != null) {
            metrics.close();
        }
        service.close();
    }

    /** How long a node given SIGTERM lets its tasks finish, unless {@code --drain-seconds} says. */
    public static final int DEFAULT_DRAIN_SECONDS = 20;

    /**
     * {@code --port P [--bind ADDR] [--store-memory SIZE] [--spill-dir DIR] [--memory-dir DIR]
     * [--cpus N] [--token-file F] [--tls-cert F --tls-key F [--tls-ca F]] [--parent PID]
     * [--drain-seconds N] [--metrics-port P]}: serves until SIGTERM, which drains it for at most N seconds (default
     * {@value #DEFAULT_DRAIN_SECONDS}) and exits 0, or SIGINT (or until
     * process {@code PID} ends), after printing {@link #READY} and the address.
     */
    public static void main(String[] args) throws InterruptedException {
        Builder b = builder();
        long parent = -1;
        long drainSeconds = DEFAULT_DRAIN_SECONDS;
        try {
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                if (i + 1 >= args.length) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, "node: " + flag + " needs a value");
                }
                String value = args[++i];
                switch (flag) {
                    case "--port" -> b.port((int) number(flag, value));
                    case "--bind" -> b.bind(value);
                    case "--store-memory" -> b.objectStoreBytes(parseSize("node: " + flag, value));
                    case "--spill-dir" -> b.spillDirectory(Path.of(value));
                    case "--memory-dir" -> b.memoryDirectory(Path.of(value));
                    case "--cpus" -> b.cpus((int) number(flag, value));
                    case "--token-file" -> b.tokenFile(Path.of(value));
                    case "--tls-cert" -> b.tlsCertificate = Path.of(value);
                    case "--tls-key" -> b.tlsKey = Path.of(value);
                    case "--tls-ca" -> b.tlsAuthority = Path.of(value);
                    case "--parent" -> parent = number(flag, value);
                    case "--metrics-port" -> b.metricsPort((int) number(flag, value));
                    case "--drain-seconds" -> {
                        drainSeconds = number(flag, value);
                        if (drainSeconds < 0 || drainSeconds > 3600) {
                            throw new CroupierException(ErrorCode.BAD_INPUT, "node: --drain-seconds = " + value
                                    + " is not allowed; needs 0..3600");
                        }
                    }
                    default -> throw new CroupierException(ErrorCode.BAD_INPUT, "node: unknown flag " + flag
                            + "; flags: --port --bind --store-memory --spill-dir --memory-dir --cpus --token-file"
                            + " --tls-cert --tls-key --tls-ca --parent --drain-seconds --metrics-port");
                }
            }
        } catch (CroupierException e) {
            System.err.println("croupier " + e.getMessage());
            System.exit(2);
        }
        // A node started by a driver ends with it, even when the driver is killed with SIGKILL.
        ProcessHandle parentProcess = parent < 0 ? null : ProcessHandle.of(parent).filter(ProcessHandle::isAlive).orElse(null);
        if (parent >= 0 && parentProcess == null) {
            System.err.println("croupier node: --parent = " + parent + " is no running process");
            System.exit(1);
            return;
        }
        NodeServer node;
        try {
            node = b.start();
        } catch (CroupierException e) {
            System.err.println("croupier node: " + asFlags(e.getMessage()));
            System.exit(1);
            return;
        } catch (RuntimeException | Error e) {
            e.printStackTrace(); // a defect: the trace first, then the one line a launcher quotes
            System.err.println("croupier node: cannot start: " + e);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "croupier-node-shutdown"));
        // SIGTERM (Kubernetes stopping a pod, a driver closing its nodes) drains, then exits 0;
        // SIGINT and the rest close at once through the hook above.
        java.time.Duration drainBound = java.time.Duration.ofSeconds(drainSeconds);
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), signal -> Thread.ofPlatform().name("croupier-node-drain")
                .start(() -> {
                    try {
                        node.drain(drainBound);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        System.exit(0);
                    }
                }));
        if (parentProcess != null) {
            parentProcess.onExit().thenRun(() -> System.exit(0));
        }
        System.out.println(READY + node.address());
        System.out.flush();
        node.awaitTermination();
    }

    /**
     * The builders' knobs a refusal names, as the flags that set them: the builders speak to
     * code, a node's refusal to whoever typed its command line.
     */
    private static final Map<String, String> FLAG_OF_KNOB = Map.of(
            "NodeServer.Builder.port", "--port",
            "NodeServer.Builder.cpus", "--cpus",
            "NodeServer.Builder.objectStoreBytes", "--store-memory",
            "NodeServer.Builder.metricsPort", "--metrics-port",
            "memoryDirectory", "--memory-dir");

    /**
     * {@code message} with each {@code knob = value} it holds written {@code --flag = value}, as
     * {@code croupier sample} names the sampler's settings: only a knob followed by its value,
     * so a folder's name that happens to contain a knob's is left as it is.
     */
    static String asFlags(String message) {
        String out = message;
        for (Map.Entry<String, String> knob : FLAG_OF_KNOB.entrySet()) {
            out = out.replace(knob.getKey() + " = ", knob.getValue() + " = ");
        }
        return out;
    }

    /** The whole number a flag was given; refused naming the flag. */
    private static long number(String flag, String value) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "node: " + flag + " = '" + value + "' is not a whole number");
        }
    }

    /**
     * Parses a byte count as every Croupier flag writes one: a number, whole or decimal, with
     * an optional unit k, m, g or t, each a power of 1024, written alone or as KiB or KB (also
     * MiB, MB, ...; case does not matter): {@code 1048576}, {@code 512m}, {@code 1.5g},
     * {@code 64KiB}. The node's flags and the command line's options read sizes with this one
     * grammar.
     *
     * @param flag the flag, named in the error
     * @param text the size as written
     * @return the size in bytes, at least 0
     * @throws CroupierException {@link ErrorCode#BAD_INPUT} naming the flag and the text, for a
     *     unit it does not know, a missing or negative number, or a size beyond a long
     */
    public static long parseSize(String flag, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        int end = 0;
        while (end < t.length() && (Character.isDigit(t.charAt(end)) || t.charAt(end) == '.')) {
            end++;
        }
        int shift = switch (t.substring(end).replace("ib", "").replace("b", "")) {
            case "" -> 0;
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> throw new CroupierException(ErrorCode.BAD_INPUT, flag + " = '" + text
                    + "' has an unknown unit; use a number with k, m, g or t (say 512m or 2g)");
        };
        double bytes;
        try {
            bytes = Double.parseDouble(t.substring(0, end)) * (1L << shift);
        } catch (NumberFormatException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, flag + " = '" + text + "' is not a size (say 512m or 2g)");
        }
        if (bytes >= Long.MAX_VALUE) {
            throw new CroupierException(ErrorCode.BAD_INPUT, flag + " = '" + text + "' is too large");
        }
        return (long) bytes;
    }

    /** Settings of a node, checked by {@link #start()}. Not thread-safe. */
    public static final class Builder {
        private String bind = "127.0.0.1";
        private int port;
        private int cpus = Runtime.getRuntime().availableProcessors();
        /** 0: sized from the machine, as for one node ({@link DefaultStoreSize}). */
        private long objectStoreBytes;
        private int smallObjectBytes = Cluster.Builder.DEFAULT_SMALL_OBJECT_BYTES;
        private Path memoryDirectory;
        private Path spillDirectory;
        private Path tokenFile;
        private Path tlsCertificate;
        private Path tlsKey;
        private Path tlsAuthority;
        private int metricsPort = -1;

        private Builder() {}

        /**
         * Serves Prometheus text at {@code /metrics} on this port of the node's bind address (0:
         * any free port, {@link NodeServer#metricsPort()}); default none.
         */
        public Builder metricsPort(int port) {
            this.metricsPort = port;
            return this;
        }

        /**
         * Address to bind (default 127.0.0.1: only this machine can connect). Any other address
         * needs a token ({@link #tokenFile}).
         */
        public Builder bind(String address) {
            this.bind = Objects.requireNonNull(address, "bind");
            return this;
        }

        /** Port to serve on; 0 (the default) for any free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** CPU slots (default: the machine's processors). */
        public Builder cpus(int cpus) {
            this.cpus = cpus;
            return this;
        }

        /**
         * Capacity of the node's object store in bytes. Default: from the machine, as for one
         * node ({@link DefaultStoreSize}); the store costs only what it holds.
         */
        public Builder objectStoreBytes(long bytes) {
            this.objectStoreBytes = bytes;
            return this;
        }

        /** Values encoded smaller than this stay on the node's heap (default 64 KiB). */
        public Builder smallObjectBytes(int bytes) {
            this.smallObjectBytes = bytes;
            return this;
        }

        /** Folder of the store's shared-memory file (default /dev/shm where it exists). */
        public Builder memoryDirectory(Path dir) {
            this.memoryDirectory = Objects.requireNonNull(dir, "memoryDirectory");
            return this;
        }

        /** Folder the store spills to (default the JVM's temporary folder). */
        public Builder spillDirectory(Path dir) {
            this.spillDirectory = Objects.requireNonNull(dir, "spillDirectory");
            return this;
        }

        /**
         * A file holding the token every call to this node must carry (default: the
         * environment variable {@code CROUPIER_TOKEN}; with neither, calls need none, and the
         * node may only bind a loopback address).
         */
        public Builder tokenFile(Path file) {
            this.tokenFile = Objects.requireNonNull(file, "tokenFile");
            return this;
        }

        /**
         * Serves over TLS with this certificate chain and private key (PEM, the key in PKCS#8),
         * and trusts {@code authority} (PEM; null: {@code CROUPIER_TLS_CA}, or plaintext) when it
         * pulls from other nodes.
         */
        public Builder tls(Path certificate, Path key, Path authority) {
            this.tlsCertificate = Objects.requireNonNull(certificate, "certificate");
            this.tlsKey = Objects.requireNonNull(key, "key");
            this.tlsAuthority = authority;
            return this;
        }

        /** Checks every setting, opens the store and starts serving. */
        public NodeServer start() {
            check(port >= 0 && port <= 65535, "port", port, "0..65535");
            check(cpus >= 1 && cpus <= 4096, "cpus", cpus, "1..4096");
            long storeBytes = objectStoreBytes == 0 ? DefaultStoreSize.forNodes(1).bytesPerNode() : objectStoreBytes;
            check(storeBytes >= 1 << 20, "objectStoreBytes", objectStoreBytes, ">= 1 MiB");
            check(smallObjectBytes >= 0 && smallObjectBytes <= 16 << 20, "smallObjectBytes", smallObjectBytes,
                    "0..16 MiB");
            check(metricsPort >= -1 && metricsPort <= 65535, "metricsPort", metricsPort, "0..65535");
            try {
                NodeService service = new NodeService(bind, port, cpus, storeBytes, smallObjectBytes,
                        memoryDirectory, spillDirectory, tokenFile, tlsCertificate, tlsKey, tlsAuthority);
                try {
                    return new NodeServer(service, metricsPort < 0 ? null
                            : MetricsEndpoint.node(bind, metricsPort, service::stats));
                } catch (RuntimeException e) {
                    service.close();
                    throw e;
                }
            } catch (IOException | UncheckedIOException e) {
                // Netty's bind failure says only "Failed to bind"; its cause says why (in use, not local)
                throw new CroupierException(ErrorCode.UNAVAILABLE, "cannot serve on " + bind + ":" + port + ": "
                        + NodeService.withReason(e.getMessage(), e.getCause()), e);
            }
        }

        private static void check(boolean ok, String knob, Object value, String range) {
            if (!ok) {
                throw new CroupierException(ErrorCode.BAD_INPUT,
                        "NodeServer.Builder." + knob + " = " + value + " is out of range; allowed: " + range);
            }
        }
    }
}
