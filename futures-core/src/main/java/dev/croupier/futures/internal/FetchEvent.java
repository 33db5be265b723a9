package dev.croupier.futures.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** JDK Flight Recorder: one object copied to a node from another that holds it. */
@Name("dev.croupier.Fetch")
@Label("Fetch")
@Category({"Croupier", "Transfer"})
@Description("An object copied to this node from the node that holds it")
final class FetchEvent extends Event {
    @Label("Object")
    String object;
    @Label("Node")
    int node;
    @Label("From node")
    int source;
    @Label("Bytes")
    @DataAmount
    long bytes;
}
