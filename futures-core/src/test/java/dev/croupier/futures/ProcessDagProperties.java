package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * {@link RandomDagProperties} on 3 node processes: any DAG gives the sequential answer, also
 * when a random node process is killed with SIGKILL from outside (the driver learns it only
 * from its broken stream) at a random moment of the submission, and restarted afterwards. One cluster serves every try (a try leaves all nodes alive).
 */
class ProcessDagProperties {

    private static Path spill;
    private static Cluster cluster;

    @BeforeContainer
    static void start() throws IOException {
        spill = Files.createTempDirectory("croupier-process-dag");
        cluster = Cluster.builder().processes(3).cpusPerNode(2).objectStoreBytes(32L << 20).spillDirectory(spill)
                .start();
    }

    @AfterContainer
    static void stop() {
        cluster.close();
        try (var paths = Files.walk(spill)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // the nodes removed their own files
        }
    }

    @Property(tries = 12)
    void anyDagOnProcessesGivesTheSequentialAnswer(@ForAll @IntRange(min = 1, max = 150) int size,
                                                   @ForAll long seed) {
        ProcessClusterTest.assertDagAnswers(cluster, RandomDagProperties.Dag.random(size, seed));
        assertEquals(0, cluster.objectCount());
    }

    @Property(tries = 6)
    void aNodeKilledWithSigkillAtARandomMomentLosesNothing(@ForAll @IntRange(min = 20, max = 150) int size,
                                                           @ForAll long seed) throws InterruptedException {
        Random chaos = new Random(seed);
        RandomDagProperties.Dag dag = RandomDagProperties.Dag.random(size, seed);
        long[][] expected = dag.evaluate();
        int victim = chaos.nextInt(3);
        int when = chaos.nextInt(size);
        long pid = cluster.task(() -> ProcessHandle.current().pid()).onNode(victim, Affinity.HARD).remote().get();
        int lostBefore = cluster.stats().failures().nodesLost();
        List<List<ObjectRef<Object>>> refs = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            refs.add(RandomDagProperties.submit(cluster, dag, refs, i));
            if (i == when) {
                // from outside, as kill -9: the driver learns it only from the broken stream
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < expected[i].length; j++) {
                assertEquals(expected[i][j], RandomDagProperties.valueOf(refs.get(i).get(j).get()), "task " + i);
            }
        }
        refs.forEach(r -> r.forEach(ObjectRef::release));
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (cluster.aliveNodes().contains(victim) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(lostBefore + 1, cluster.stats().failures().nodesLost(), "the loss is counted once");
        cluster.restartNode(victim);
        assertEquals(List.of(0, 1, 2), cluster.aliveNodes());
    }
}
