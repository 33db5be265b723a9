package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
}
