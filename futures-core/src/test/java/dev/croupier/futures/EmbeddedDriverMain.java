package dev.croupier.futures;

import java.nio.file.Path;

/**
 * A driver for {@link CrashLeftoversTest}: starts an embedded cluster spilling under the folder
 * given, puts a value, prints {@code running} and waits to be killed.
 */
public final class EmbeddedDriverMain {

    private EmbeddedDriverMain() {}

    public static void main(String[] args) throws Exception {
        Cluster cluster = Cluster.builder().nodes(2).objectStoreBytes(8L << 20).spillDirectory(Path.of(args[0]))
                .start();
        cluster.put(new byte[1 << 20]);
        System.out.println("running");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
