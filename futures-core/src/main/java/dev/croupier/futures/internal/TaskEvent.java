package dev.croupier.futures.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder: one attempt of a task on a node, from reading its arguments to storing
 * its outputs, with how it ended. A recording of a job (driver and node processes each record
 * their own) shows its tasks beside the spills, restores and fetches they caused. Made only
 * while the recorder has started, as the store's events are, since the first use of an event
 * class starts the recorder (the store's {@code SpillEvent} says what that costs).
 */
@Name("dev.croupier.Task")
@Label("Task")
@Category({"Croupier", "Tasks"})
@Description("An attempt of a task on a node")
final class TaskEvent extends Event {
    @Label("Task")
    String task;
    @Label("Node")
    int node;
    @Label("Attempt")
    long attempt;
    @Label("Outcome")
    String outcome;
    @Label("Output bytes")
    @DataAmount
    long bytesOut;
}
