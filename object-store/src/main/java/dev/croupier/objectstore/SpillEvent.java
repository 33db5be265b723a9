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
 * events.
 *
 * <p>The store makes its events only while the recorder has started
 * ({@code FlightRecorder.isInitialized()}: a recording from the command line or from
 * {@code jcmd}); otherwise they cost a branch. The first use of an event class starts the
 * recorder's Java side whether or not anything records: its metadata, annotations and generated
 * classes, in the interpreter, in every JVM that spills, restores or runs a task
 * (docs/benchmarks.md, "The Flight Recorder, started for nothing").
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
