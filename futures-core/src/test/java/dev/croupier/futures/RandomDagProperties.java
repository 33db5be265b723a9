package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Differential properties of the runtime: a random DAG of tasks (fan-in, fan-out, several
 * return values) gives exactly the values of a plain sequential evaluation, also when nodes
 * die during and after the run, and when random tasks are cancelled only their sub-graphs fail.
 * Each runs on the embedded backend sharing the heap and in its serializing mode, which sends
 * every message as the wire does.
 */
class RandomDagProperties {

    /**
     * Task i of a DAG: it reads up to three earlier outputs and returns {@code returns} values.
     * Output j of task i is {@code mix(i, j, inputs)}.
     */
    record TaskShape(int[] inputs, int[] inputReturn, int returns, boolean big) {}

    static final class Dag {
        final List<TaskShape> tasks = new ArrayList<>();

        static Dag random(int size, long seed) {
            Random r = new Random(seed);
            Dag dag = new Dag();
            for (int i = 0; i < size; i++) {
                int fanIn = i == 0 ? 0 : r.nextInt(Math.min(i, 3) + 1);
                int[] inputs = new int[fanIn];
                int[] which = new int[fanIn];
                for (int k = 0; k < fanIn; k++) {
                    inputs[k] = r.nextInt(i);
                    which[k] = r.nextInt(dag.tasks.get(inputs[k]).returns());
                }
                int returns = r.nextInt(5) == 0 ? 1 + r.nextInt(3) : 1;
                dag.tasks.add(new TaskShape(inputs, which, returns, r.nextInt(8) == 0));
            }
            return dag;
        }

        /** The sequential answer: outputs[i][j]. */
        long[][] evaluate() {
            long[][] out = new long[tasks.size()][];
            for (int i = 0; i < tasks.size(); i++) {
                TaskShape t = tasks.get(i);
                long[] in = new long[t.inputs().length];
                for (int k = 0; k < in.length; k++) {
                    in[k] = out[t.inputs()[k]][t.inputReturn()[k]];
                }
                out[i] = new long[t.returns()];
                for (int j = 0; j < t.returns(); j++) {
                    out[i][j] = mix(i, j, in);
                }
            }
            return out;
        }
    }

    static long mix(int task, int ret, long[] inputs) {
        long h = task * 0x9E3779B97F4A7C15L + ret;
        for (long v : inputs) {
            h = Long.rotateLeft(h ^ v, 17) * 0xBF58476D1CE4E5B9L;
        }
        return h;
    }

    /** The remote body: the same mix, taking inputs as Longs, or as byte arrays holding them when big. */
    static Object body(int task, int returns, boolean big, Object[] inputs) {
        long[] in = new long[inputs.length];
        for (int k = 0; k < inputs.length; k++) {
            in[k] = inputs[k] instanceof byte[] b ? java.nio.ByteBuffer.wrap(b).getLong() : (Long) inputs[k];
        }
        List<Object> values = new ArrayList<>(returns);
        for (int j = 0; j < returns; j++) {
            long v = mix(task, j, in);
            values.add(big ? java.nio.ByteBuffer.allocate(80_000).putLong(v).array() : (Object) v);
        }
        return returns == 1 ? values.getFirst() : values;
    }

    static long valueOf(Object o) {
        return o instanceof byte[] b ? java.nio.ByteBuffer.wrap(b).getLong() : (Long) o;
    }

    /** Submits task i of the DAG; returns its refs. */
    static List<ObjectRef<Object>> submit(Cluster c, Dag dag, List<List<ObjectRef<Object>>> refs, int i) {
        return submit(c, dag, refs, i, UnaryOperator.identity());
    }

    /** Submits task i of the DAG with {@code options} (say, its node); returns its refs. */
    static List<ObjectRef<Object>> submit(Cluster c, Dag dag, List<List<ObjectRef<Object>>> refs, int i,
                                          UnaryOperator<TaskBuilder<Object>> options) {
        TaskShape t = dag.tasks.get(i);
        Object[] args = new Object[3];
        for (int k = 0; k < t.inputs().length; k++) {
            args[k] = refs.get(t.inputs()[k]).get(t.inputReturn()[k]);
        }
        int n = t.inputs().length;
        int returns = t.returns();
        boolean big = t.big();
        TaskBuilder<Object> b = switch (n) {
            case 0 -> c.task(() -> body(i, returns, big, new Object[0]));
            case 1 -> c.task((Object a) -> body(i, returns, big, new Object[] {a}), args[0]);
            case 2 -> c.task((Object a, Object b2) -> body(i, returns, big, new Object[] {a, b2}), args[0], args[1]);
            default -> c.task((Object a, Object b2, Object b3) -> body(i, returns, big, new Object[] {a, b2, b3}),
                    args[0], args[1], args[2]);
        };
        options.apply(b.name("t" + i).maxRetries(50));
        return returns == 1 ? List.of(b.remote()) : b.<Object>numReturns(returns).remote();
    }

    /** Releasing every ref of the DAG frees every object the cluster holds. */
    private static void assertAllFreedOnRelease(Cluster c, List<List<ObjectRef<Object>>> refs) {
        refs.forEach(l -> l.forEach(ObjectRef::release));
        assertEquals(0, c.objectCount());
    }

    /** Every output of the DAG has its sequential value. */
    private static void assertSequentialAnswer(long[][] expected, List<List<ObjectRef<Object>>> refs) {
        for (int i = 0; i < expected.length; i++) {
            for (int j = 0; j < expected[i].length; j++) {
                assertEquals(expected[i][j], valueOf(refs.get(i).get(j).get(Duration.ofSeconds(60))), "t" + i + "." + j);
            }
        }
    }

    @Property(tries = 40)
    void anyDagGivesTheSequentialAnswer(
            @ForAll @IntRange(min = 1, max = 200) int size,
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 8) int nodes,
            @ForAll boolean serializing) throws IOException {
        Dag dag = Dag.random(size, seed);
        long[][] expected = dag.evaluate();
        Path spill = Files.createTempDirectory("croupier-dag");
        try (Cluster c = TestClusters.small(nodes, spill).serializing(serializing).start()) {
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                refs.add(submit(c, dag, refs, i));
            }
            assertSequentialAnswer(expected, refs);
            assertAllFreedOnRelease(c, refs);
        } finally {
            assertNoFilesLeft(spill);
        }
    }

    /**
     * Tasks with and without a node, on one slot per node so that they wait for room at the
     * owner: each runs once, gives the sequential answer, and those with hard affinity run on
     * their node.
     */
    @Property(tries = 30)
    void tasksWaitingForRoomRunOnceAndHardOnesWhereTheyMust(
            @ForAll @IntRange(min = 1, max = 150) int size,
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 4) int nodes,
            @ForAll boolean serializing) throws IOException {
        Dag dag = Dag.random(size, seed);
        long[][] expected = dag.evaluate();
        Random where = new Random(seed * 31);
        Affinity[] affinity = new Affinity[size];
        int[] node = new int[size];
        Path spill = Files.createTempDirectory("croupier-dag");
        try (Cluster c = TestClusters.small(nodes, spill).cpusPerNode(1).serializing(serializing).start()) {
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                int choice = where.nextInt(3);
                affinity[i] = choice == 0 ? null : choice == 1 ? Affinity.SOFT : Affinity.HARD;
                node[i] = where.nextInt(nodes);
                int k = i;
                refs.add(submit(c, dag, refs, i, b -> affinity[k] == null ? b : b.onNode(node[k], affinity[k])));
            }
            assertSequentialAnswer(expected, refs);
            Map<String, Map<Integer, Long>> ran = new java.util.HashMap<>();
            c.stats().tasks().forEach(t -> ran.put(t.name(), t.tasksPerNode()));
            for (int i = 0; i < size; i++) {
                Map<Integer, Long> perNode = ran.get("t" + i);
                assertEquals(1L, perNode.values().stream().mapToLong(Long::longValue).sum(), "t" + i + " ran " + perNode);
                if (affinity[i] == Affinity.HARD) {
                    assertEquals(Map.of(node[i], 1L), perNode, "t" + i + " has hard affinity to node " + node[i]);
                }
            }
            assertAllFreedOnRelease(c, refs);
        } finally {
            assertNoFilesLeft(spill);
        }
    }

    @Property(tries = 30)
    void anyDagGivesTheSequentialAnswerWhenNodesDie(
            @ForAll @IntRange(min = 1, max = 200) int size,
            @ForAll long seed,
            @ForAll @IntRange(min = 2, max = 8) int nodes,
            @ForAll boolean serializing) throws IOException {
        Dag dag = Dag.random(size, seed);
        long[][] expected = dag.evaluate();
        Random chaos = new Random(seed ^ 0x5DEECE66DL);
        Path spill = Files.createTempDirectory("croupier-dag");
        try (Cluster c = TestClusters.small(nodes, spill).serializing(serializing)
                .smallObjectBytes(chaos.nextBoolean() ? 0 : 1024).start()) {
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                refs.add(submit(c, dag, refs, i));
                if (chaos.nextInt(40) == 0) {
                    killAndRestart(c, chaos, nodes);
                }
            }
            // Release some intermediate refs: rebuilding must then go through freed lineage.
            BitSet released = new BitSet();
            for (int i = 0; i < size; i++) {
                if (chaos.nextInt(3) == 0) {
                    released.set(i);
                }
            }
            for (int i = 0; i < size; i++) {
                if (i == size / 2) {
                    killAndRestart(c, chaos, nodes);
                }
                if (!released.get(i)) {
                    for (int j = 0; j < expected[i].length; j++) {
                        assertEquals(expected[i][j], valueOf(refs.get(i).get(j).get(Duration.ofSeconds(60))));
                    }
                }
            }
            released.stream().forEach(i -> refs.get(i).forEach(ObjectRef::release));
            // Everything has run once: now kill every node, and every object must be rebuilt.
            for (int n = 0; n < nodes; n++) {
                c.killNode(n);
                c.restartNode(n);
            }
            for (int i = size - 1; i >= 0; i--) {
                if (!released.get(i)) {
                    for (int j = 0; j < expected[i].length; j++) {
                        assertEquals(expected[i][j], valueOf(refs.get(i).get(j).get(Duration.ofSeconds(60))),
                                "t" + i + "." + j + " after every node died");
                    }
                }
            }
        } finally {
            assertNoFilesLeft(spill);
        }
    }

    /** A closed cluster leaves nothing in its spill folder. */
    static void assertNoFilesLeft(Path spill) throws IOException {
        try (var left = Files.walk(spill)) {
            assertEquals(List.of(spill), left.toList(), "files left behind");
        }
        Files.delete(spill);
    }

    private static void killAndRestart(Cluster c, Random chaos, int nodes) {
        int victim = chaos.nextInt(nodes);
        c.killNode(victim);
        c.restartNode(victim);
    }

    @Property(tries = 30)
    void cancellingTasksFailsExactlyTheirSubgraphs(
            @ForAll @IntRange(min = 1, max = 150) int size,
            @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 6) int nodes,
            @ForAll boolean serializing) throws IOException {
        Dag dag = Dag.random(size, seed);
        long[][] expected = dag.evaluate();
        Random chaos = new Random(~seed);
        Path spill = Files.createTempDirectory("croupier-dag");
        try (Cluster c = TestClusters.small(nodes, spill).serializing(serializing).start()) {
            List<List<ObjectRef<Object>>> refs = new ArrayList<>();
            BitSet cancelled = new BitSet();
            for (int i = 0; i < size; i++) {
                refs.add(submit(c, dag, refs, i));
                int victim = chaos.nextInt(i + 1);
                if (chaos.nextInt(10) == 0 && c.cancel(refs.get(victim).getFirst())) {
                    cancelled.set(victim);
                }
            }
            BitSet doomed = new BitSet();
            for (int i = 0; i < size; i++) {
                boolean d = cancelled.get(i);
                for (int in : dag.tasks.get(i).inputs()) {
                    d |= doomed.get(in);
                }
                if (d) {
                    doomed.set(i);
                }
            }
            for (int i = 0; i < size; i++) {
                for (int j = 0; j < expected[i].length; j++) {
                    ObjectRef<Object> ref = refs.get(i).get(j);
                    if (doomed.get(i)) {
                        Throwable e = org.junit.jupiter.api.Assertions.assertThrows(CroupierException.class,
                                () -> ref.get(Duration.ofSeconds(60)));
                        assertInstanceOf(TaskCancelledException.class, e, "t" + i);
                    } else {
                        assertEquals(expected[i][j], valueOf(ref.get(Duration.ofSeconds(60))), "t" + i);
                    }
                }
            }
            assertAllFreedOnRelease(c, refs);
        } finally {
            assertNoFilesLeft(spill);
        }
    }
}
