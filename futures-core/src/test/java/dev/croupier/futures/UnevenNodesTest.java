package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.internal.ClusterConfig;
import dev.croupier.futures.internal.OwnerCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes started by hand may have different CPU slots ({@code croupier node --cpus N}). A task
 * that asks for more CPUs than a node has must never be placed there, where it would wait
 * forever in the node's queue and hold up the tasks behind it.
 */
class UnevenNodesTest {

    @TempDir
    Path spill;

    private NodeServer node(int cpus) {
        return NodeServer.builder().cpus(cpus).objectStoreBytes(16L << 20).spillDirectory(spill).start();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aTaskGoesOnlyToNodesWithItsCpus() {
        try (NodeServer small = node(1); NodeServer large = node(4);
             Cluster c = Cluster.connect(small.address(), large.address())) {
            List<ObjectRef<Integer>> wide = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                wide.add(c.task((Integer x) -> x * 2, i).cpus(3).remote());
            }
            List<ObjectRef<Integer>> soft = new ArrayList<>();
            for (int i = 0; i < 4; i++) { // asked to go to the small node, which cannot take them
                soft.add(c.task((Integer x) -> x + 1, i).cpus(2).onNode(0, Affinity.SOFT).remote());
            }
            // its argument lies on the small node, where its bytes would draw it
            ObjectRef<byte[]> held = c.task(() -> new byte[1 << 20]).onNode(0, Affinity.HARD).remote();
            ObjectRef<Integer> reader = c.task((byte[] b) -> b.length, held).cpus(2).remote();
            for (int i = 0; i < wide.size(); i++) {
                assertEquals(2 * i, wide.get(i).get());
            }
            for (int i = 0; i < soft.size(); i++) {
                assertEquals(i + 1, soft.get(i).get());
            }
            assertEquals(1 << 20, reader.get());
            assertEquals(1, c.stats().nodes().get(0).tasksRun(), "the 1-CPU node ran only the 1-CPU task");
            CroupierException e = assertThrows(CroupierException.class,
                    () -> c.task(() -> 1).cpus(2).onNode(0, Affinity.HARD).remote());
            assertEquals(ErrorCode.BAD_INPUT, e.code());
            assertTrue(e.getMessage().contains("2 cpus") && e.getMessage().contains("node 0 has 1"), e.getMessage());
        }
    }

    /**
     * By default the machine's processors are shared out so that each has a slot: where they
     * do not divide evenly among the nodes, the first nodes have one more, and every node has one.
     */
    @Property(tries = 500)
    void everyProcessorHasASlotAndNodesDifferByOneAtMost(@ForAll @IntRange(min = 1, max = 512) int processors,
                                                         @ForAll @IntRange(min = 1, max = 1024) int nodes) {
        int[] shared = ClusterConfig.shareProcessors(processors, nodes);
        ClusterConfig config = Cluster.builder().nodes(nodes).objectStoreBytes(8L << 20).conclude()
                .withCpus(shared[0], shared[1]);
        int total = 0;
        for (int n = 0; n < nodes; n++) {
            int cpus = config.cpusOf(n);
            assertTrue(cpus >= 1 && cpus >= config.cpusOf(Math.min(nodes - 1, n + 1)), "node " + n);
            assertTrue(cpus - config.cpusOf(nodes - 1) <= 1, "node " + n);
            total += cpus;
        }
        assertEquals(Math.max(processors, nodes), total);
    }

    /** The embedded nodes take the slots so shared out, and placement keeps to them. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void embeddedNodesOfUnevenSlotsRunTasksOnlyWhereTheyFit() {
        ClusterConfig config = TestClusters.small(3, spill).conclude().withCpus(1, 2); // slots 2, 2, 1
        try (Cluster c = OwnerCluster.start(config)) {
            List<ObjectRef<Integer>> wide = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                wide.add(c.task((Integer x) -> x * 3, i).cpus(2).remote());
            }
            for (int i = 0; i < wide.size(); i++) {
                assertEquals(3 * i, wide.get(i).get());
            }
            assertEquals(0, c.stats().nodes().get(2).tasksRun(), "the 1-slot node ran none");
            assertTrue(c.stats().nodes().get(0).tasksRun() > 0 && c.stats().nodes().get(1).tasksRun() > 0);
            CroupierException e = assertThrows(CroupierException.class,
                    () -> c.task(() -> 1).cpus(2).onNode(2, Affinity.HARD).remote());
            assertTrue(e.getMessage().contains("node 2 has 1"), e.getMessage());
        }
    }
}
