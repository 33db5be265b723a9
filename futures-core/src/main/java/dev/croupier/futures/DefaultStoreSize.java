package dev.croupier.futures;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The object-store size each node gets when none is given, from the machine: as Ray sizes its
 * object store, {@value #PERCENT}% of the memory available, divided among the nodes this
 * machine runs. In a container the cgroup's limit (less what it uses) counts when it is lower.
 * The memory folder (/dev/shm) does not bound it: a store that does not fit there is its
 * process's own memory instead (embedded nodes' always are). A store costs only what it holds
 * (its memory is reserved as it is used), so a large default is free until a job fills it.
 * Immutable.
 *
 * @param bytesPerNode the size of each node's store
 * @param reason the rule and the figures it was computed from, for reports
 */
public record DefaultStoreSize(long bytesPerNode, String reason) {

    /** Percent of the available memory that the stores of a machine get by default. */
    public static final int PERCENT = 30;
    /** Smallest store a default gives; below it the machine is too small and says so. */
    public static final long MIN_BYTES_PER_NODE = 32L << 20;

    /** The default for {@code nodes} stores on this machine. */
    public static DefaultStoreSize forNodes(int nodes) {
        return of(nodes, memAvailable(), cgroupRoom());
    }

    /**
     * The rule, from figures: {@code available} bytes of memory, {@code cgroupRoom} bytes the
     * container may still use (-1 without a limit).
     *
     * @throws CroupierException {@link ErrorCode#BAD_INPUT} when each store would be smaller
     *     than {@link #MIN_BYTES_PER_NODE}, naming the figures and the way out
     */
    static DefaultStoreSize of(int nodes, long available, long cgroupRoom) {
        long memory = cgroupRoom >= 0 ? Math.min(available, cgroupRoom) : available;
        long total = memory / 100 * PERCENT;
        String why = PERCENT + "% of " + gib(memory) + " available" + (cgroupRoom >= 0 && cgroupRoom < available
                ? " to this container (cgroup limit)" : "");
        long perNode = total / nodes & -(1L << 20);
        if (perNode < MIN_BYTES_PER_NODE) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "this machine is too small for " + nodes
                    + " object stores by default: " + why + " is " + gib(total) + ", under "
                    + (MIN_BYTES_PER_NODE >> 20) + " MiB per node; give the size (--store-memory, or"
                    + " Cluster.Builder.objectStoreBytes) or run fewer nodes");
        }
        return new DefaultStoreSize(perNode, gib(perNode) + " per node: " + why + (nodes > 1 ? " / " + nodes
                + " nodes" : ""));
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    /** MemAvailable of /proc/meminfo; the JVM's view of physical memory where there is none. */
    private static long memAvailable() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            // not Linux: the JVM's figure below
        }
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getFreeMemorySize();
    }

    /** What this process's cgroup may still use (limit less usage), or -1 without a limit. */
    private static long cgroupRoom() {
        long v2 = room(Path.of("/sys/fs/cgroup/memory.max"), Path.of("/sys/fs/cgroup/memory.current"));
        return v2 >= 0 ? v2 : room(Path.of("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                Path.of("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    }

    private static long room(Path limitFile, Path usageFile) {
        try {
            String limit = Files.readString(limitFile).trim();
            if (limit.equals("max") || limit.length() > 18) { // "max", or v1's "no limit" of about 2^63
                return -1;
            }
            long used = Files.isReadable(usageFile) ? Long.parseLong(Files.readString(usageFile).trim()) : 0;
            return Math.max(0, Long.parseLong(limit) - used);
        } catch (IOException | RuntimeException none) {
            return -1;
        }
    }
}
