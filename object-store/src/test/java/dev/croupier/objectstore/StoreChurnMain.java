package dev.croupier.objectstore;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process that opens, checks and closes stores in one memory folder as fast as it can, while
 * others do the same there ({@link CrashedStoreReclaimTest}): every store it opens must keep its
 * directory and lock file until it closes, whatever the others' reclaims see. Prints the first
 * store that lost them and exits 1; exits 0 after {@code args[2]} stores.
 */
public final class StoreChurnMain {

    private StoreChurnMain() {}

    public static void main(String[] args) throws Exception {
        Path memory = Path.of(args[0]);
        Path spill = Path.of(args[1]);
        int stores = Integer.parseInt(args[2]);
        for (int i = 0; i < stores; i++) {
            String name = "churn-" + ProcessHandle.current().pid() + "-" + i;
            try (ObjectStore store = ObjectStore.builder().name(name).capacityBytes(1L << 20)
                    .memoryDirectory(memory).spillDirectory(spill).build()) {
                StoreDirectories.reclaimDead(memory);
                if (!Files.exists(memory.resolve("croupier-store-" + name).resolve("store.lock"))) {
                    System.out.println("store " + name + " lost its directory or its lock file");
                    System.exit(1);
                }
            }
        }
    }
}
