package dev.croupier.objectstore;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A process that opens a store, fills it past its memory so it spills, prints {@code ready}
 * and then waits to be killed: the crashed store of {@link CrashedStoreReclaimTest}.
 * Arguments: store name, memory directory, spill directory, and {@code private} for a store
 * in its process's own memory (as an embedded node's is).
 */
public final class StoreHolderMain {

    private StoreHolderMain() {}

    public static void main(String[] args) throws Exception {
        ObjectStore store = ObjectStore.builder().name(args[0]).capacityBytes(4L << 20)
                .memoryDirectory(Path.of(args[1])).spillDirectory(Path.of(args[2]))
                .sharedMemory(!(args.length > 3 && args[3].equals("private"))).build();
        for (long i = 0; i < 12; i++) {
            store.put(ObjectId.of(7, i), MemorySegment.ofArray(new byte[1 << 20]));
        }
        store.awaitSpillIdle();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
