package dev.croupier.objectstore;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder: one spill write, a batch of objects written to the store's spill files;
 * its duration is the write's. Enabled by default in a recording, as are the other Croupier
 * events; off, it costs a branch.
 */
@Name("dev.croupier.Spill")
@Label("Spill")
@Category({"Croupier", "Object store"})
@Description("Objects written from the store's memory to its spill files")
final class SpillEvent extends Event {
    @Label("Store")
    String store;
    @Label("Objects")
    int objects;
    @Label("Bytes")
    @DataAmount
    long bytes;
}
