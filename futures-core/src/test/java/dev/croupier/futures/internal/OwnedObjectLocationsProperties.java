package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.croupier.objectstore.ObjectId;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * An entry's copies against a list: recorded once each in the order they came, dead nodes'
 * copies forgotten when an argument or a reader looks for one, a reader sent to the node it
 * prefers when that node holds a copy and to the oldest live copy otherwise, and a freed
 * entry handing out exactly the copies it had.
 */
class OwnedObjectLocationsProperties {

    enum Kind { READY_ON, ADD, REMOVE, REMOVE_IDS, KILL, LIVE, ARGUMENT }

    record Op(Kind kind, int node, int other) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.of(Kind.class), Arbitraries.integers().between(0, 5),
                Arbitraries.integers().between(0, 5)).as(Op::new).list().ofMaxSize(60);
    }

    @Property(tries = 500)
    void copiesFollowAList(@ForAll("ops") List<Op> ops) {
        List<NodeLink> nodes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            nodes.add(new NodeLink(i, 1, "node-" + i));
        }
        OwnedObject entry = new OwnedObject(new ObjectId(1, 1), null, 0);
        List<NodeLink> model = new ArrayList<>();
        for (Op op : ops) {
            NodeLink node = nodes.get(op.node());
            switch (op.kind()) {
                case READY_ON -> {
                    entry.markReady(node, 10, 1);
                    add(model, node);
                }
                case ADD -> {
                    entry.addLocation(node);
                    add(model, node);
                }
                case REMOVE -> {
                    entry.removeLocation(node);
                    model.remove(node);
                }
                case REMOVE_IDS -> {
                    entry.removeLocations(new int[] {op.node(), op.other()});
                    model.removeIf(n -> n.id == op.node() || n.id == op.other());
                }
                case KILL -> node.die();
                case LIVE -> {
                    model.removeIf(n -> !n.alive());
                    NodeLink preferred = nodes.get(op.other());
                    NodeLink expected = model.contains(preferred) ? preferred : model.isEmpty() ? null : model.getFirst();
                    assertSame(expected, entry.liveLocation(preferred), "reader's node, preferring " + preferred.id);
                }
                case ARGUMENT -> {
                    model.removeIf(n -> !n.alive());
                    assertArrayEquals(model.stream().mapToInt(n -> n.id).toArray(), entry.asArgument().nodes(),
                            "the argument's locations");
                }
            }
            for (NodeLink n : nodes) {
                assertEquals(model.contains(n), entry.isLocatedOn(n), "located on node " + n.id);
            }
        }
        NodeLink[] freed = entry.free();
        assertArrayEquals(model.toArray(), freed, "the copies a freed entry hands out");
        assertNull(entry.free(), "freed twice");
    }

    private static void add(List<NodeLink> model, NodeLink node) {
        if (!model.contains(node)) {
            model.add(node);
        }
    }
}
