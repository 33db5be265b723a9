package dev.croupier.futures;

/**
 * A driver for {@link ProcessClusterTest}: starts one node process, keeps a task running on it,
 * prints {@code running} and waits to be killed.
 */
public final class KilledDriverMain {

    private KilledDriverMain() {}

    public static void main(String[] args) throws Exception {
        Cluster cluster = Cluster.builder().processes(1).objectStoreBytes(8L << 20).start();
        cluster.task(() -> {
            Thread.sleep(600_000);
            return 0;
        }).remote();
        System.out.println("running");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
