package dev.croupier.objectstore;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder: one restore read, objects read back from spill files into memory, for a
 * reader that waits (one object) or ahead of it (a prefetched run); its duration is the read's.
 */
@Name("dev.croupier.Restore")
@Label("Restore")
@Category({"Croupier", "Object store"})
@Description("Objects read back from spill files into the store's memory")
final class RestoreEvent extends Event {
    @Label("Store")
    String store;
    @Label("Objects")
    int objects;
    @Label("Bytes")
    @DataAmount
    long bytes;
    @Label("Prefetch")
    boolean prefetch;
}
