package dev.croupier.formats.reshard;

import java.lang.management.ManagementFactory;

/**
 * {@code max_mem_usage}: a share of physical memory ({@code 80%}) or a size ({@code 2GiB}).
 *
 * <p>Thread-safety: immutable.
 *
 * @param percent the share of RAM in percent (0 &lt; p &le; 100), or 0 when {@code bytes} is used
 * @param bytes the limit in bytes, or 0 when {@code percent} is used
 */
public record MemoryLimit(double percent, long bytes) {
    /** dSort's default: 80% of physical memory. */
    public static final MemoryLimit DEFAULT = new MemoryLimit(80, 0);

    /**
     * @param field the field name for errors
     * @param text {@code NN%} or a size accepted by {@link ByteSize}
     * @return the limit
     */
    public static MemoryLimit parse(String field, String text) {
        if (text != null && text.strip().endsWith("%")) {
            String n = text.strip();
            double p;
            try {
                p = Double.parseDouble(n.substring(0, n.length() - 1));
            } catch (NumberFormatException e) {
                throw new BadSpecException(field, text, "percentage needs a number before '%'");
            }
            if (!(p > 0 && p <= 100)) {
                throw new BadSpecException(field, text, "percentage must be in (0, 100]");
            }
            return new MemoryLimit(p, 0);
        }
        long b = ByteSize.parse(field, text);
        if (b <= 0) {
            throw new BadSpecException(field, text, "memory limit must be > 0");
        }
        return new MemoryLimit(0, b);
    }

    /** @return this host's physical memory in bytes (the JVM's heap limit where the OS will not say) */
    public static long physicalMemoryOfHost() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Runtime.getRuntime().maxMemory();
    }

    /**
     * @param physicalBytes total physical memory
     * @return the limit in bytes, capped at physical memory as dSort caps it
     */
    public long resolve(long physicalBytes) {
        return percent > 0 ? (long) (physicalBytes * percent / 100) : Math.min(bytes, physicalBytes);
    }

    @Override
    public String toString() {
        return percent > 0 ? (percent == Math.rint(percent) ? Long.toString((long) percent) : Double.toString(percent)) + "%"
                : Long.toString(bytes);
    }
}
