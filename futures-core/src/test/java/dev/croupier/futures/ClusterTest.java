package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ClusterTest {

    @TempDir
    Path spill;

    static long add(long a, long b) {
        return a + b;
    }

    @Test
    void tasksChainThroughRefsAndValues() {
        try (Cluster c = TestClusters.start(4, spill)) {
            ObjectRef<Long> a = c.task(ClusterTest::add, 1L, 2L).remote();
            ObjectRef<Long> b = c.task(ClusterTest::add, a, 10L).remote();
            ObjectRef<Long> d = c.task(ClusterTest::add, a, b).name("sum").remote();
            assertEquals(16L, d.get());
            assertEquals(3L, c.get(a));
            assertTrue(c.stats().tasks().stream().anyMatch(t -> t.name().equals("sum") && t.count() == 1));
            assertTrue(c.stats().tasks().stream().anyMatch(t -> t.name().equals("ClusterTest::add")));
            assertEquals(new ClusterStats.Failures(0, 0, 0, List.of()), c.stats().failures(), "a calm run");
        }
    }

    @Test
    void everyArityReceivesItsArguments() {
        try (Cluster c = TestClusters.start(2, spill)) {
            ObjectRef<Integer> one = c.put(1);
            assertEquals(0, c.task(() -> 0).remote().get());
            assertEquals(1, c.task((Integer x) -> x, one).remote().get());
            assertEquals(3, c.task((Integer x, Integer y) -> x + y, one, 2).remote().get());
            assertEquals(6, c.task((Integer x, Integer y, Integer z) -> x + y + z, one, 2, 3).remote().get());
            assertEquals(10, c.task((Integer p, Integer q, Integer r, Integer s) -> p + q + r + s,
                    one, 2, 3, 4).remote().get());
            assertEquals(15, c.task((Integer p, Integer q, Integer r, Integer s, Integer t) -> p + q + r + s + t,
                    one, 2, 3, 4, 5).remote().get());
            assertEquals(21, c.task((Integer p, Integer q, Integer r, Integer s, Integer t, Integer u)
                    -> p + q + r + s + t + u, one, 2, 3, 4, 5, 6).remote().get());
        }
    }

    @Test
    void valuesOfEveryCodecRoundTrip() {
        try (Cluster c = TestClusters.small(2, spill).smallObjectBytes(0).start()) {
            byte[] bytes = new byte[200_000];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) (i * 31);
            }
            assertArrayEquals(bytes, c.put(bytes).get());
            ByteBuffer bb = c.put(ByteBuffer.wrap(bytes)).get();
            assertTrue(bb.isReadOnly());
            assertEquals(ByteBuffer.wrap(bytes), bb);
            MemorySegment seg = c.put(MemorySegment.ofArray(bytes)).get();
            assertTrue(seg.isReadOnly());
            assertArrayEquals(bytes, seg.toArray(ValueLayout.JAVA_BYTE));
            for (Object v : List.of(true, (byte) 7, (short) -3, 'x', 42, -5L, 1.5f, 2.25, "héllo", "")) {
                assertEquals(v, c.put(v).get());
            }
            assertNull(c.put(null).get());
            List<Object> list = new ArrayList<>(List.of(1, "two", Map.of("k", 3L)));
            assertEquals(list, c.put(list).get());
        }
    }

    @Test
    void segmentArgumentsArriveAsViewsAndResultsAreCopiedOut() {
        try (Cluster c = TestClusters.small(2, spill).smallObjectBytes(0).start()) {
            byte[] bytes = new byte[100_000];
            bytes[99_999] = 9;
            ObjectRef<MemorySegment> in = c.put(MemorySegment.ofArray(bytes));
            ObjectRef<Long> sum = c.task((MemorySegment s) -> {
                long total = 0;
                for (long i = 0; i < s.byteSize(); i++) {
                    total += s.get(ValueLayout.JAVA_BYTE, i);
                }
                return total;
            }, in).remote();
            assertEquals(9L, sum.get());
            ObjectRef<MemorySegment> echoed = c.task((MemorySegment s) -> s, in).remote();
            MemorySegment view = echoed.get();
            assertEquals(100_000, view.byteSize());
            assertEquals(9, view.get(ValueLayout.JAVA_BYTE, 99_999));
            // repeated gets return the one pinned view instead of pinning again
            for (int i = 0; i < 100; i++) {
                assertTrue(echoed.get() == view);
            }
            echoed.release();
            in.release();
            assertEquals(1, c.objectCount()); // only 'sum' is left
            sum.release();
            assertEquals(0, c.objectCount());
        }
    }

    /**
     * A ref dropped without {@code release} frees its object once it is collected, also when a
     * done task read it, and only then: a held ref keeps its object through collections.
     */
    @Test
    void aRefCollectedUnreleasedFreesItsObjectAndAHeldOneKeepsIt() throws InterruptedException {
        try (Cluster c = TestClusters.start(2, spill)) {
            ObjectRef<byte[]> held = c.task(() -> new byte[100_000]).remote();
            ObjectRef<byte[]> released = c.task(() -> new byte[100_000]).remote();
            dropUnreleased(c);
            ObjectRef<Integer> reader = readerOfDropped(c);
            c.wait(List.of(held, released), 2, Duration.ofSeconds(30));
            released.release();
            released = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.objectCount() > 2 && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(10);
            }
            assertEquals(2, c.objectCount(), "the dropped refs' objects are freed once the refs are collected,"
                    + " also one a done task read");
            for (int i = 0; i < 5; i++) {
                System.gc();
                Thread.sleep(10);
            }
            assertEquals(2, c.objectCount(), "a held ref keeps its object");
            assertEquals(100_000, held.get().length);
            assertEquals(100_000, reader.get());
        }
    }

    /**
     * The output of a done task that read a ref made in this frame and dropped on return: the
     * task's lineage keeps the argument's entry, not its ref.
     */
    private static ObjectRef<Integer> readerOfDropped(Cluster c) {
        ObjectRef<byte[]> argument = c.task(() -> new byte[100_000]).remote();
        ObjectRef<Integer> reader = c.task((byte[] b) -> b.length, argument).remote();
        c.wait(List.of(reader), 1, Duration.ofSeconds(30));
        return reader;
    }

    /**
     * A put object cannot be rebuilt, so one a task read stays while the task's lineage lives,
     * though its ref was dropped unreleased: the task's lost output is rebuilt from it.
     */
    @Test
    void aDroppedPutATaskReadStaysForTheTasksRebuild() throws InterruptedException {
        try (Cluster c = TestClusters.small(2, spill).smallObjectBytes(0).start()) {
            int[] where = new int[1];
            ObjectRef<Integer> length = readerOfDroppedPut(c, where);
            assertEquals(100_000, length.get(Duration.ofSeconds(30)));
            for (int i = 0; i < 5; i++) {
                System.gc();
                Thread.sleep(10);
            }
            int reader = 1 - where[0];
            c.killNode(reader);
            c.restartNode(reader);
            assertEquals(100_000, length.get(Duration.ofSeconds(30)));
        }
    }

    /**
     * A task on the other node than a put's, reading it; the put's ref is dropped on return,
     * and {@code where[0]} is the put's node.
     */
    private static ObjectRef<Integer> readerOfDroppedPut(Cluster c, int[] where) {
        ObjectRef<byte[]> put = c.put(new byte[100_000]);
        where[0] = c.stats().nodes().stream().filter(n -> n.objects() > 0).findFirst().orElseThrow().nodeId();
        return c.task((byte[] b) -> b.length, put).onNode(1 - where[0], Affinity.HARD).remote();
    }

    /** A ref made and waited for in a frame of its own, so that nothing holds it on return. */
    private static void dropUnreleased(Cluster c) {
        ObjectRef<byte[]> dropped = c.task(() -> new byte[100_000]).remote();
        c.wait(List.of(dropped), 1, Duration.ofSeconds(30));
    }

    @Test
    void taskOutputMemoryBecomesTheObjectWithoutACopyAndUnreturnedMemoryIsFreed() {
        try (Cluster c = TestClusters.small(2, spill).start()) {
            List<ObjectRef<Object>> made = c.task(() -> {
                MemorySegment out = TaskOutput.allocate(200_000);
                out.fill((byte) 7);
                MemorySegment unused = TaskOutput.allocate(300_000);
                unused.fill((byte) 1);
                return List.<Object>of(out, out.address());
            }).numReturns(2).remote();
            MemorySegment view = (MemorySegment) made.get(0).get();
            assertEquals(200_000, view.byteSize());
            assertEquals(7, view.get(ValueLayout.JAVA_BYTE, 199_999));
            assertTrue(view.isReadOnly());
            assertEquals((long) (Long) made.get(1).get(), view.address(), "the stored object is the memory the task wrote");
            // the 300 KB the task did not return were freed: only the 200 KB frame and the Long remain
            assertEquals(2, c.objectCount());
            long inMemory = c.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesInMemory).sum();
            assertTrue(inMemory >= 200_000 && inMemory < 300_000, "bytes in memory: " + inMemory);

            ObjectRef<MemorySegment> failed = c.task(() -> {
                MemorySegment lost = TaskOutput.allocate(400_000).fill((byte) 2);
                if (lost.byteSize() > 0) {
                    throw new IllegalStateException("no output");
                }
                return lost;
            }).maxRetries(0).remote();
            assertThrows(TaskFailedException.class, failed::get);
            assertEquals(inMemory, c.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesInMemory).sum());

            // the same segment returned twice: the second output is an ordinary copy
            List<ObjectRef<MemorySegment>> twice = c.task(() -> {
                MemorySegment out = TaskOutput.allocate(100_000);
                out.fill((byte) 3);
                return List.of(out, out);
            }).<MemorySegment>numReturns(2).remote();
            assertEquals(3, twice.get(1).get().get(ValueLayout.JAVA_BYTE, 99_999));
            assertEquals(3, twice.get(0).get().get(ValueLayout.JAVA_BYTE, 0));

            made.forEach(ObjectRef::release);
            failed.release();
            twice.forEach(ObjectRef::release);
            assertEquals(0, c.objectCount());
            assertEquals(0, c.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::bytesInMemory).sum());
        }
        // outside a task it is plain memory
        MemorySegment plain = TaskOutput.allocate(16);
        plain.set(ValueLayout.JAVA_LONG, 8, 5L);
        assertEquals(5L, plain.get(ValueLayout.JAVA_LONG, 8));
        assertThrows(IllegalArgumentException.class, () -> TaskOutput.allocate(-1));
    }

    record Point(int x, int y) implements java.io.Serializable {}

    @Test
    void serializableTypesNeedTheAllowList() {
        try (Cluster refusing = TestClusters.start(1, spill)) {
            CroupierException e = assertThrows(CroupierException.class, () -> refusing.put(new Point(1, 2)).get());
            assertEquals(ErrorCode.CODEC, e.code());
            assertTrue(e.getMessage().contains("allowSerializable"), e.getMessage());
        }
        try (Cluster allowing = TestClusters.small(1, spill).allowSerializable("dev.croupier.futures.*").start()) {
            assertEquals(new Point(1, 2), allowing.put(new Point(1, 2)).get());
        }
    }

    @Test
    void customCodecsStoreTheirType() {
        Codec<Point> codec = new Codec<>() {
            @Override
            public long encodedSize(Point p) {
                return 8;
            }

            @Override
            public void encode(Point p, MemorySegment out) {
                out.set(ValueLayout.JAVA_INT_UNALIGNED, 0, p.x());
                out.set(ValueLayout.JAVA_INT_UNALIGNED, 4, p.y());
            }

            @Override
            public Point decode(MemorySegment in) {
                return new Point(in.get(ValueLayout.JAVA_INT_UNALIGNED, 0), in.get(ValueLayout.JAVA_INT_UNALIGNED, 4));
            }
        };
        try (Cluster c = TestClusters.small(1, spill).codec(Point.class, codec).start()) {
            assertEquals(new Point(-1, 7), c.task(() -> new Point(-1, 7)).remote().get());
        }
    }

    @Test
    void numReturnsGivesOneObjectPerValue() {
        try (Cluster c = TestClusters.start(3, spill)) {
            List<ObjectRef<Integer>> parts = c.task((Integer n) -> List.of(n, n * 2, n * 3), 5)
                    .<Integer>numReturns(3).remote();
            assertEquals(List.of(5, 10, 15), c.get(parts));
            assertEquals(8 + 4, parts.get(0).byteSize()); // frame header + int
            ObjectRef<List<Integer>> all = c.task((List<Integer> xs) -> xs, ObjectRef.all(parts)).remote();
            assertEquals(List.of(5, 10, 15), all.get());

            List<ObjectRef<Integer>> wrong = c.task(() -> List.of(1)).<Integer>numReturns(2).remote();
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> wrong.get(1).get());
            assertTrue(e.getMessage().contains("numReturns(2)"), e.getMessage());
        }
    }

    /**
     * A ref released before its value is made, with nothing else reading the value, ends what
     * waits on it: the futures taken from it, and a get in another thread, even one with no
     * timeout. The value is never made, and they would otherwise wait forever.
     */
    @Test
    void aRefReleasedBeforeItsValueIsMadeEndsWhatWaitsOnIt() throws Exception {
        try (Cluster c = TestClusters.start(2, spill)) {
            CountDownLatch released = new CountDownLatch(1);
            ObjectRef<byte[]> ref = c.task(() -> {
                released.await();
                return new byte[10];
            }).remote();
            CompletableFuture<ObjectRef<byte[]>> done = ref.whenDone();
            CompletableFuture<byte[]> value = ref.toCompletableFuture();
            CompletableFuture<Throwable> gotten = new CompletableFuture<>();
            Thread getter = Thread.ofPlatform().start(() -> {
                try {
                    ref.get();
                    gotten.complete(null);
                } catch (Throwable t) {
                    gotten.complete(t);
                }
            });
            // until the get waits for the value (or has ended, which the assertions below report)
            while (getter.getState() == Thread.State.NEW || getter.getState() == Thread.State.RUNNABLE
                    || getter.getState() == Thread.State.BLOCKED) {
                Thread.onSpinWait();
            }
            ref.release();
            released.countDown();
            // guards, not measures: before, all three waited forever
            ExecutionException notMade = assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
            assertTrue(notMade.getCause() instanceof CroupierException e && e.code() == ErrorCode.CANCELLED
                    && e.getMessage().contains("released before its value was made"), String.valueOf(notMade.getCause()));
            ExecutionException noValue = assertThrows(ExecutionException.class, () -> value.get(60, TimeUnit.SECONDS));
            assertTrue(noValue.getCause().getMessage().contains("was released"), String.valueOf(noValue.getCause()));
            Throwable t = gotten.get(60, TimeUnit.SECONDS);
            assertTrue(t instanceof IllegalStateException && t.getMessage().contains("was released"), String.valueOf(t));
            getter.join();
            assertEquals(0, c.objectCount());
        }
    }

    /**
     * A task's outputs settle together: a callback on the first, registered while the task
     * runs, finds every sibling done, ready ones with their sizes, and so for a failure. Sizes
     * may be asked after release: a freed object's ref keeps its size, but one freed before it
     * was made has none.
     */
    @Test
    void aTasksOutputsSettleTogetherSoACallbackOnOneSeesThemAll() {
        try (Cluster c = TestClusters.start(2, spill)) {
            ObjectRef<byte[]> earlier = c.task(() -> new byte[1]).remote();
            earlier.get();
            CountDownLatch registered = new CountDownLatch(1);
            List<ObjectRef<byte[]>> parts = c.task(() -> {
                registered.await(); // a callback that ran at once could find a sibling not marked yet
                return List.of(new byte[10], new byte[2_000], new byte[300_000]);
            }).<byte[]>numReturns(3).remote();
            CompletableFuture<long[]> sizes = parts.getFirst().whenDone()
                    .thenApply(first -> parts.stream().mapToLong(ObjectRef::byteSize).toArray());
            registered.countDown();
            long[] seen = sizes.join();
            long[] later = parts.stream().mapToLong(ObjectRef::byteSize).toArray();
            assertArrayEquals(later, seen, "the sizes the first output's callback saw");
            assertTrue(later[0] > 10 && later[1] > 2_000 && later[2] > 300_000, Arrays.toString(later));
            // settled together, the outputs completed at one moment: wait lists them as given
            List<ObjectRef<byte[]>> given = List.of(parts.get(2), earlier, parts.get(0), parts.get(1));
            assertEquals(List.of(earlier, parts.get(2), parts.get(0), parts.get(1)),
                    c.wait(given, 4, Duration.ofSeconds(30)).ready());

            long before = c.objectCount();
            parts.get(2).release();
            assertEquals(before - 1, c.objectCount(), "the released output is freed");
            assertEquals(later[2], parts.get(2).byteSize(), "a freed object's ref keeps its size");
            assertFalse(parts.get(2).isDone());

            CountDownLatch releasedFirst = new CountDownLatch(1);
            List<ObjectRef<byte[]>> pair = c.task(() -> {
                releasedFirst.await();
                return List.of(new byte[10], new byte[20]);
            }).<byte[]>numReturns(2).remote();
            pair.getFirst().release();
            releasedFirst.countDown();
            pair.getLast().get();
            assertEquals(-1, pair.getFirst().byteSize(), "an object freed before it was made has no size");

            CountDownLatch registeredOnFailed = new CountDownLatch(1);
            List<ObjectRef<byte[]>> failed = c.<byte[]>task(() -> {
                registeredOnFailed.await();
                throw new IllegalStateException("no parts today");
            }).<byte[]>numReturns(3).remote();
            CompletableFuture<boolean[]> dones = failed.getFirst().whenDone().thenApply(first -> {
                boolean[] d = new boolean[failed.size()];
                for (int i = 0; i < d.length; i++) {
                    d[i] = failed.get(i).isDone();
                }
                return d;
            });
            registeredOnFailed.countDown();
            boolean[] done = dones.join();
            assertArrayEquals(new boolean[] {true, true, true}, done, "the failed task's outputs, from the first's callback");
        }
    }

    @Test
    void aFailingTaskNamesItselfAndItsNodeAndItsDependentsFailTheSameWay() {
        try (Cluster c = TestClusters.start(2, spill)) {
            ObjectRef<Integer> bad = c.<Integer, Integer>task((Integer x) -> {
                throw new IllegalArgumentException("no " + x);
            }, 3).name("exploder").remote();
            AtomicInteger ran = new AtomicInteger();
            ObjectRef<Integer> dependent = c.task((Integer x) -> ran.incrementAndGet(), bad).remote();
            TaskFailedException e = assertThrows(TaskFailedException.class, bad::get);
            assertEquals("exploder", e.taskName());
            assertTrue(e.nodeId() >= 0);
            assertTrue(e.getMessage().contains("exploder") && e.getMessage().contains("node " + e.nodeId()),
                    e.getMessage());
            assertInstanceOf(IllegalArgumentException.class, e.getCause());
            assertEquals("no 3", e.getCause().getMessage());
            TaskFailedException d = assertThrows(TaskFailedException.class, dependent::get);
            assertEquals("exploder", d.taskName());
            assertEquals(0, ran.get());
        }
    }

    @Test
    void exceptionsAreRetriedOnlyWhenAsked() {
        try (Cluster c = TestClusters.start(2, spill)) {
            AtomicInteger calls = new AtomicInteger();
            ObjectRef<Integer> flaky = c.task(() -> {
                if (calls.incrementAndGet() < 3) {
                    throw new IllegalStateException("flaky");
                }
                return 7;
            }).retryExceptions(true).maxRetries(5).remote();
            assertEquals(7, flaky.get());
            assertEquals(3, calls.get());

            AtomicInteger once = new AtomicInteger();
            ObjectRef<Integer> failing = c.<Integer>task(() -> {
                once.incrementAndGet();
                throw new IllegalStateException("always");
            }).maxRetries(5).remote();
            assertThrows(TaskFailedException.class, failing::get);
            assertEquals(1, once.get());
        }
    }

    @Test
    void cancelStopsQueuedAndRunningTasksAndFailsDependents() throws Exception {
        try (Cluster c = TestClusters.small(1, spill).cpusPerNode(1).start()) {
            CountDownLatch started = new CountDownLatch(1);
            ObjectRef<Integer> running = c.task(() -> {
                started.countDown();
                Thread.sleep(60_000);
                return 1;
            }).remote();
            AtomicInteger queuedRan = new AtomicInteger();
            ObjectRef<Integer> queued = c.task(() -> queuedRan.incrementAndGet()).remote();
            ObjectRef<Integer> dependent = c.task((Integer x) -> x + 1, running).remote();
            assertTrue(started.await(10, TimeUnit.SECONDS));

            assertTrue(c.cancel(queued));
            assertTrue(c.cancel(running));
            assertThrows(TaskCancelledException.class, running::get);
            assertThrows(TaskCancelledException.class, queued::get);
            TaskCancelledException e = assertThrows(TaskCancelledException.class, dependent::get);
            assertEquals(ErrorCode.CANCELLED, e.code());
            assertEquals(0, queuedRan.get());

            // the worker thread is free again and carries no stale interrupt
            assertEquals(5, c.task(() -> {
                Thread.sleep(10);
                return 5;
            }).remote().get(Duration.ofSeconds(10)));
            ObjectRef<Integer> done = c.put(1);
            assertFalse(c.cancel(done));
            ObjectRef<Integer> finished = c.task(() -> 2).remote();
            finished.get();
            assertFalse(c.cancel(finished));
            assertEquals(2, finished.get());
        }
    }

    @Test
    void getTimesOutAndWaitReturnsCompletionOrder() throws Exception {
        try (Cluster c = TestClusters.small(3, spill).cpusPerNode(1).start()) {
            CountDownLatch gate = new CountDownLatch(1);
            ObjectRef<Integer> blocked = c.task(() -> {
                gate.await();
                return 0;
            }).remote();
            assertThrows(GetTimeoutException.class, () -> blocked.get(Duration.ofMillis(50)));

            ObjectRef<Integer> slow = c.task(() -> {
                Thread.sleep(300);
                return 2;
            }).remote();
            ObjectRef<Integer> fast = c.task(() -> 1).remote();
            WaitResult<Integer> first = c.wait(List.of(slow, blocked, fast), 1, Duration.ofSeconds(10));
            assertEquals(List.of(fast), first.ready());
            assertEquals(List.of(slow, blocked), first.pending());

            WaitResult<Integer> two = c.wait(List.of(blocked, slow, fast), 3, Duration.ofMillis(1500));
            assertEquals(List.of(fast, slow), two.ready());
            assertEquals(List.of(blocked), two.pending());

            WaitResult<Integer> none = c.wait(List.of(blocked), 1, Duration.ofMillis(20));
            assertTrue(none.ready().isEmpty());
            assertThrows(CroupierException.class, () -> c.wait(List.of(fast), 2, Duration.ZERO));
            var done = blocked.whenDone();
            assertFalse(done.isDone());
            gate.countDown();
            assertTrue(done.get(10, TimeUnit.SECONDS) == blocked);
            assertEquals(0, blocked.toCompletableFuture().get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void lostTaskOutputsAreRebuiltFromLineageAndPutObjectsAreNot() {
        try (Cluster c = TestClusters.small(3, spill).smallObjectBytes(0).start()) {
            ObjectRef<Long> put = c.task(() -> 5L).onNode(0, Affinity.HARD).remote();
            put.get();
            ObjectRef<Integer> stored = c.put(41);
            AtomicInteger runs = new AtomicInteger();
            ObjectRef<Long> made = c.task((Long x) -> {
                runs.incrementAndGet();
                return x * 2;
            }, put).onNode(1, Affinity.SOFT).remote();
            assertEquals(10L, made.get());
            for (int id : List.of(0, 1, 2)) {
                c.killNode(id);
                c.restartNode(id);
            }
            assertEquals(10L, made.get());
            assertEquals(2, runs.get());
            assertEquals(5L, put.get());
            ObjectLostException lost = assertThrows(ObjectLostException.class, stored::get);
            assertEquals(ErrorCode.OBJECT_LOST, lost.code());
            assertTrue(lost.getMessage().contains(stored.id().toString()), lost.getMessage());
            ObjectRef<Integer> dependent = c.task((Integer x) -> x + 1, stored).remote();
            assertThrows(ObjectLostException.class, dependent::get);
            // made and its argument were rebuilt; killNode knows each loss the instant it happens
            assertEquals(new ClusterStats.Failures(0, 2, 3, List.of(0.0, 0.0, 0.0)), c.stats().failures());
        }
    }

    /** A segment of {@code bytes} bytes, each its offset's low byte, made on {@code node}. */
    private static ObjectRef<MemorySegment> segmentOn(Cluster c, int node, Affinity affinity, int bytes) {
        return c.task(() -> {
            MemorySegment out = TaskOutput.allocate(bytes);
            for (int i = 0; i < bytes; i++) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            return out;
        }).onNode(node, affinity).remote();
    }

    private static long sum(MemorySegment s) {
        long total = 0;
        for (long i = 0; i < s.byteSize(); i++) {
            total += s.get(ValueLayout.JAVA_BYTE, i);
        }
        return total;
    }

    /** Embedded nodes read each other's objects where they are: nothing is fetched, no copy is made. */
    @Test
    void embeddedNodesReadEachOthersObjectsInPlace() {
        try (Cluster c = TestClusters.start(2, spill)) {
            int bytes = 1 << 20; // stored, not a small heap value
            ObjectRef<MemorySegment> made = segmentOn(c, 0, Affinity.HARD, bytes);
            long expected = c.task(ClusterTest::sum, made).onNode(0, Affinity.HARD).remote().get();
            assertEquals(expected, c.task(ClusterTest::sum, made).onNode(1, Affinity.HARD).remote().get());
            assertEquals(List.of(0L, 0L), c.stats().nodes().stream().map(ClusterStats.NodeStats::bytesFetched).toList());
        }
        try (Cluster c = TestClusters.small(2, spill).serializing(true).start()) {
            ObjectRef<MemorySegment> made = segmentOn(c, 0, Affinity.HARD, 1 << 20);
            c.task(ClusterTest::sum, made).onNode(1, Affinity.HARD).remote().get();
            long fetched = c.stats().nodes().get(1).bytesFetched();
            assertTrue(fetched >= 1 << 20, "serializing copies, as the wire does: " + fetched);
        }
    }

    /**
     * Concurrent readers of one remote object on a node make one pull: the second waits for the
     * first's copy (the serializing mode copies between nodes, as node processes on other hosts
     * do).
     */
    @Test
    void concurrentPullsOfOneObjectOnANodeAreOnePull() {
        try (Cluster c = TestClusters.small(2, spill).serializing(true).objectStoreBytes(128L << 20).start()) {
            int bytes = 48 << 20;
            ObjectRef<MemorySegment> big = c.task((Integer n) -> {
                MemorySegment out = TaskOutput.allocate(n);
                out.fill((byte) 1);
                return out;
            }, bytes).onNode(0, Affinity.HARD).remote();
            big.whenDone().join();
            List<ObjectRef<Long>> readers = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                readers.add(c.task((MemorySegment s) -> s.byteSize(), big).onNode(1, Affinity.HARD).remote());
            }
            for (ObjectRef<Long> r : readers) {
                assertEquals(bytes, r.get());
            }
            assertEquals(bytes + 8, c.stats().nodes().get(1).bytesFetched(), "node 1 pulled the object's frame once");
        }
    }

    /**
     * A node killed while another reads its object in place unmaps it under the reader; the
     * reader's attempt is one whose argument was lost, not a failed task: the object is rebuilt
     * and the reader runs again.
     */
    @Test
    void aHolderKilledUnderAnInPlaceReaderMakesTheArgumentLostNotTheTaskFailed() throws InterruptedException {
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch killed = new CountDownLatch(1);
        AtomicInteger readerRuns = new AtomicInteger();
        try (Cluster c = TestClusters.start(3, spill)) {
            int bytes = 1 << 20;
            ObjectRef<MemorySegment> made = segmentOn(c, 0, Affinity.SOFT, bytes); // rebuilt elsewhere
            made.whenDone().join();
            ObjectRef<Long> read = c.task((MemorySegment s) -> {
                long first = sum(s);
                if (readerRuns.incrementAndGet() == 1) {
                    reading.countDown();
                    killed.await(); // the holder dies here; the view is unmapped
                    return first + sum(s);
                }
                return 2 * first;
            }, made).onNode(1, Affinity.SOFT).maxRetries(0).remote();
            assertTrue(reading.await(30, TimeUnit.SECONDS));
            c.killNode(0);
            killed.countDown();
            long once = 0;
            for (int i = 0; i < bytes; i++) {
                once += (byte) i;
            }
            assertEquals(2 * once, read.get());
            assertEquals(2, readerRuns.get());
        }
    }

    /** close interrupts running tasks and returns only once they have returned, so a caller can clean up after them. */
    @Test
    void closeWaitsForInterruptedTasksToReturn() throws InterruptedException {
        java.util.concurrent.atomic.AtomicBoolean cleanedUp = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        Cluster c = TestClusters.start(2, spill);
        c.task(() -> {
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                long until = System.nanoTime() + 200_000_000L; // a task that takes a while to stop
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                cleanedUp.set(true);
            }
            return 1;
        }).remote();
        assertTrue(started.await(30, TimeUnit.SECONDS));
        c.close();
        assertTrue(cleanedUp.get(), "close returned before the interrupted task did");
    }

    /**
     * One death, many rebuilds of one creator: three consumers of a freed intermediate die with
     * their node, and each lost output rebuilds the intermediate's creator again. Rebuilds are
     * not retries, so a creator allowed no retry at all is rebuilt as often as its consumers need.
     */
    @Test
    void rebuildsDoNotSpendRetries() {
        try (Cluster c = TestClusters.small(2, spill).smallObjectBytes(0).start()) {
            AtomicInteger runs = new AtomicInteger();
            ObjectRef<Long> intermediate = c.task(() -> {
                runs.incrementAndGet();
                return 7L;
            }).onNode(1, Affinity.SOFT).maxRetries(0).remote();
            List<ObjectRef<Long>> consumers = new ArrayList<>();
            for (long k = 1; k <= 3; k++) {
                long factor = k;
                consumers.add(c.task((Long x) -> x * factor, intermediate).onNode(1, Affinity.SOFT).remote());
            }
            for (ObjectRef<Long> consumer : consumers) {
                consumer.whenDone().join();
            }
            intermediate.release(); // freed: only the consumers' lineage knows it now
            c.killNode(1);
            c.restartNode(1);
            for (int k = 0; k < 3; k++) {
                assertEquals(7L * (k + 1), consumers.get(k).get());
                consumers.get(k).release();
            }
            assertTrue(runs.get() >= 2, "the freed intermediate was rebuilt: " + runs.get() + " runs");
        }
    }

    @Test
    void hardAffinityToADeadNodeFailsAndSoftAffinityMovesOn() {
        try (Cluster c = TestClusters.start(2, spill)) {
            c.killNode(1);
            TaskFailedException e = assertThrows(TaskFailedException.class,
                    () -> c.task(() -> 1).onNode(1, Affinity.HARD).remote().get());
            assertTrue(e.getMessage().contains("node 1"), e.getMessage());
            assertEquals(2, c.task(() -> 2).onNode(1, Affinity.SOFT).remote().get());
            assertEquals(List.of(0), c.aliveNodes());
            int added = c.addNode();
            assertEquals(2, added);
            assertEquals(3, c.task(() -> 3).onNode(added, Affinity.HARD).remote().get());
        }
    }

    /** Where each task of {@code name} ran: node id to count. */
    private static Map<Integer, Long> perNode(Cluster c, String name) {
        return c.stats().tasks().stream().filter(t -> t.name().equals(name)).findFirst()
                .map(ClusterStats.TaskStats::tasksPerNode).orElse(Map.of());
    }

    /** A task holding its node's one slot, running, until {@link Blocker#unblock}. */
    private record Blocker(ObjectRef<Integer> ref, CountDownLatch latch) {
        /** Lets the task end, and returns once it has. */
        void unblock() {
            latch.countDown();
            assertEquals(0, ref.get(Duration.ofSeconds(30)));
        }
    }

    /** Starts a {@link Blocker} on {@code node} (hard affinity) and waits until it runs. */
    private static Blocker block(Cluster c, int node) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ObjectRef<Integer> ref = c.task(() -> {
            started.countDown();
            release.await();
            return 0;
        }).name("blocker").onNode(node, Affinity.HARD).remote();
        assertTrue(started.await(10, TimeUnit.SECONDS));
        return new Blocker(ref, release);
    }

    /** Tasks 0..n-1 named {@code name} on {@code node}, each returning its number. */
    private static List<ObjectRef<Integer>> numbered(Cluster c, int n, String name, int node, Affinity affinity) {
        List<ObjectRef<Integer>> refs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int v = i;
            refs.add(c.task(() -> v).name(name).onNode(node, affinity).remote());
        }
        return refs;
    }

    @Test
    void aBusyNodesSoftWorkRunsOnANodeWithRoomAndItsHardWorkWaits() throws Exception {
        try (Cluster c = TestClusters.small(2, spill).cpusPerNode(1).start()) {
            Blocker blocked = block(c, 0);
            List<ObjectRef<Integer>> soft = numbered(c, 6, "soft", 0, Affinity.SOFT);
            List<ObjectRef<Integer>> hard = numbered(c, 3, "hard", 0, Affinity.HARD);
            // Node 0 holds its blocked task and the next one queued behind it; the other five
            // run on node 1 while node 0 is still blocked.
            for (int i = 1; i < 6; i++) {
                assertEquals(i, soft.get(i).get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(1, 5L), perNode(c, "soft"));
            assertEquals(Map.of(), perNode(c, "hard"));
            ClusterStats waiting = c.stats();
            assertEquals(List.of(3L, 0L), waiting.nodes().stream().map(ClusterStats.NodeStats::tasksWaiting).toList(),
                    "the hard ones wait at the driver for node 0");
            blocked.unblock();
            assertEquals(0, soft.getFirst().get(Duration.ofSeconds(30)));
            for (int i = 0; i < 3; i++) {
                assertEquals(i, hard.get(i).get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(0, 1L, 1, 5L), perNode(c, "soft"));
            assertEquals(Map.of(0, 3L), perNode(c, "hard"));
            assertEquals(List.of(0L, 0L), c.stats().nodes().stream().map(ClusterStats.NodeStats::tasksWaiting).toList());
        }
    }

    /**
     * A node with room takes soft work waiting for a busy node, but not a task whose arguments
     * are on that node (a store-sized object): that one stays, even though it became ready
     * before the soft work that moves.
     */
    @Test
    void aWaitingTaskWhoseArgumentsAreOnItsNodeStaysWhileSoftWorkMoves() throws Exception {
        try (Cluster c = TestClusters.small(2, spill).cpusPerNode(1).start()) {
            ObjectRef<byte[]> big = c.task(() -> new byte[1 << 20]).name("big").onNode(0, Affinity.HARD).remote();
            assertEquals(1 << 20, big.get(Duration.ofSeconds(30)).length);
            Blocker blocked = block(c, 0);
            List<ObjectRef<Integer>> queued = numbered(c, 1, "queued", 0, Affinity.HARD); // node 0 is full now
            List<ObjectRef<Integer>> local = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                local.add(c.task((byte[] b) -> b.length, big).name("local").remote());
            }
            List<ObjectRef<Integer>> soft = numbered(c, 2, "soft", 0, Affinity.SOFT);
            for (ObjectRef<Integer> s : soft) {
                s.get(Duration.ofSeconds(30));
            }
            assertEquals(Map.of(1, 2L), perNode(c, "soft"), "node 1 took the soft work, passing over the older local tasks");
            assertEquals(Map.of(), perNode(c, "local"));
            blocked.unblock();
            assertEquals(0, queued.getFirst().get(Duration.ofSeconds(30)));
            for (ObjectRef<Integer> l : local) {
                assertEquals(1 << 20, l.get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(0, 3L), perNode(c, "local"));
        }
    }

    @Test
    void tasksWaitingAtTheDriverRunInTheOrderTheyBecameReady() throws Exception {
        try (Cluster c = TestClusters.small(1, spill).cpusPerNode(1).start()) {
            Blocker blocked = block(c, 0);
            java.util.Queue<String> ran = new java.util.concurrent.ConcurrentLinkedQueue<>();
            // the first is queued on the node behind the blocked task; the rest wait at the driver
            List<ObjectRef<Boolean>> refs = new ArrayList<>();
            for (String name : List.of("soft-1", "soft-2", "any-3", "hard-4", "any-5", "soft-6")) {
                TaskBuilder<Boolean> task = c.task(() -> ran.add(name)).name(name);
                refs.add(name.startsWith("any") ? task.remote()
                        : task.onNode(0, name.startsWith("hard") ? Affinity.HARD : Affinity.SOFT).remote());
            }
            blocked.unblock();
            for (ObjectRef<Boolean> r : refs) {
                assertTrue(r.get(Duration.ofSeconds(30)));
            }
            assertEquals(List.of("soft-1", "soft-2", "any-3", "hard-4", "any-5", "soft-6"), List.copyOf(ran));
        }
    }

    @Test
    void tasksWaitingForAnyNodeAreCountedUntilANodeHasRoom() throws Exception {
        try (Cluster c = TestClusters.small(1, spill).cpusPerNode(1).start()) {
            Blocker blocked = block(c, 0);
            List<ObjectRef<Integer>> anywhere = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int v = i;
                anywhere.add(c.task(() -> v).name("anywhere").remote());
            }
            // the node holds its blocked task and the first of these; three wait at the driver
            assertEquals(3, c.stats().tasksWaitingForAnyNode());
            assertTrue(c.stats().toString().contains("tasks waiting for any node 3"), c.stats().toString());
            blocked.unblock();
            for (int i = 0; i < 4; i++) {
                assertEquals(i, anywhere.get(i).get(Duration.ofSeconds(30)));
            }
            assertEquals(0, c.stats().tasksWaitingForAnyNode());
        }
    }

    @Test
    void aBusyNodesWorkOnItsOwnLargeArgumentsIsNotMoved() throws Exception {
        try (Cluster c = TestClusters.small(2, spill).cpusPerNode(1).start()) {
            ObjectRef<byte[]> big = c.task(() -> new byte[1 << 20]).onNode(0, Affinity.HARD).remote();
            big.get();
            Blocker blocked = block(c, 0);
            List<ObjectRef<Integer>> local = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                local.add(c.task((byte[] b) -> b.length, big).name("local").onNode(0, Affinity.SOFT).remote());
            }
            // Submitted after them, these are moved to node 1 and run while node 0 is blocked;
            // a node with room takes the oldest movable task, so the ones above are not.
            List<ObjectRef<Integer>> movable = numbered(c, 3, "movable", 0, Affinity.SOFT);
            for (int i = 0; i < 3; i++) {
                assertEquals(i, movable.get(i).get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(1, 3L), perNode(c, "movable"));
            assertEquals(Map.of(), perNode(c, "local"));
            blocked.unblock();
            for (ObjectRef<Integer> l : local) {
                assertEquals(1 << 20, l.get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(0, 3L), perNode(c, "local"));
        }
    }

    @Test
    void tasksWaitingForADeadNodeMoveOnOrFailByTheirAffinity() throws Exception {
        try (Cluster c = TestClusters.small(2, spill).cpusPerNode(1).start()) {
            Blocker blocked0 = block(c, 0);
            block(c, 1); // killed with its node
            List<ObjectRef<Integer>> soft = numbered(c, 4, "soft", 1, Affinity.SOFT);
            List<ObjectRef<Integer>> hard = numbered(c, 2, "hard", 1, Affinity.HARD);
            c.killNode(1);
            for (ObjectRef<Integer> h : hard) {
                TaskFailedException e = assertThrows(TaskFailedException.class, () -> h.get(Duration.ofSeconds(30)));
                assertTrue(e.getMessage().contains("node 1 (hard affinity) is not alive"), e.getMessage());
            }
            blocked0.unblock();
            for (int i = 0; i < 4; i++) {
                assertEquals(i, soft.get(i).get(Duration.ofSeconds(30)));
            }
            assertEquals(Map.of(0, 4L), perNode(c, "soft"));
            assertEquals(Map.of(), perNode(c, "hard"));
        }
    }

    @Test
    void tasksRunWhereTheirLargeArgumentsAre() {
        try (Cluster c = TestClusters.start(4, spill)) {
            ObjectRef<byte[]> big = c.task(() -> new byte[1 << 20]).onNode(2, Affinity.HARD).remote();
            big.get();
            for (int i = 0; i < 5; i++) {
                c.task((byte[] b) -> b.length, big).name("consumer").remote().get();
            }
            Map<Integer, Long> perNode = c.stats().tasks().stream()
                    .filter(t -> t.name().equals("consumer")).findFirst().orElseThrow().tasksPerNode();
            assertEquals(Map.of(2, 5L), perNode);
        }
    }

    @Test
    void objectsAreFreedWhenNoRefOrTaskNeedsThem() throws Exception {
        try (Cluster c = TestClusters.small(3, spill).smallObjectBytes(0).start()) {
            List<ObjectRef<?>> refs = new ArrayList<>();
            ObjectRef<byte[]> root = c.put(new byte[10_000]);
            refs.add(root);
            for (int i = 0; i < 20; i++) {
                refs.add(c.task((byte[] b, Integer k) -> b.length + k, root, i).remote());
            }
            List<ObjectRef<Integer>> parts = c.task(() -> List.of(1, 2)).<Integer>numReturns(2).remote();
            refs.addAll(parts);
            for (ObjectRef<?> r : refs) {
                r.get();
            }
            assertTrue(c.objectCount() > 0);
            refs.forEach(ObjectRef::release);
            assertEquals(0, c.objectCount());
            assertEquals(0, c.stats().nodes().stream().mapToLong(ClusterStats.NodeStats::objects).sum());
            assertThrows(IllegalStateException.class, root::get);
            assertThrows(IllegalStateException.class, root::whenDone);
        }
    }

    /**
     * Folders the stores cannot use are the user's settings: refused as bad input naming the
     * folder, not thrown as defects, and nothing is left behind.
     */
    @Test
    void foldersTheStoresCannotUseAreNamedAsBadInput() throws Exception {
        Path aFile = Files.createFile(spill.resolve("not-a-folder"));
        CroupierException e = assertThrows(CroupierException.class,
                () -> TestClusters.small(2, spill.resolve("spill")).memoryDirectory(aFile).start());
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains("memoryDirectory = " + aFile), e.getMessage());
        try (Stream<Path> left = Files.list(spill.resolve("spill"))) {
            assertEquals(List.of(), left.toList(), "the failed start's spill folder is removed");
        }
        e = assertThrows(CroupierException.class, () -> TestClusters.start(2, aFile));
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().startsWith("spill folder " + aFile + " cannot hold"), e.getMessage());
    }

    @Test
    void builderNamesTheBadKnob() {
        CroupierException e = assertThrows(CroupierException.class, () -> Cluster.builder().nodes(0).start());
        assertTrue(e.getMessage().contains("nodes = 0"), e.getMessage());
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        e = assertThrows(CroupierException.class, () -> Cluster.builder().objectStoreBytes(10).start());
        assertTrue(e.getMessage().contains("objectStoreBytes"), e.getMessage());
        try (Cluster c = TestClusters.start(1, spill)) {
            e = assertThrows(CroupierException.class, () -> c.task(() -> 1).cpus(0));
            assertTrue(e.getMessage().contains("cpus = 0"), e.getMessage());
            e = assertThrows(CroupierException.class, () -> c.task(() -> 1).cpus(64).remote());
            assertTrue(e.getMessage().contains("64 cpus"), e.getMessage());
        }
    }

    @Test
    void closeLeavesNoFilesAndFailsLaterCalls() throws Exception {
        Cluster c = TestClusters.small(2, spill).smallObjectBytes(0).start();
        ObjectRef<byte[]> r = c.put(new byte[1 << 20]);
        r.get();
        c.close();
        assertThrows(CroupierException.class, () -> c.task(() -> 1));
        try (Stream<Path> left = Files.list(spill)) {
            assertEquals(List.of(), left.toList());
        }
    }

    /**
     * Closing a cluster closes every node's store, the nodes side by side: no store folder is
     * left in the memory folder, whether a node held objects, held none, or was killed before.
     */
    @Test
    void closeLeavesNoNodesStoreBehind(@TempDir Path spill, @TempDir Path memory) throws Exception {
        try (Cluster c = TestClusters.small(4, spill).memoryDirectory(memory).start()) {
            List<ObjectRef<MemorySegment>> held = new ArrayList<>();
            for (int node = 0; node < 3; node++) {
                held.add(c.task(() -> {
                    MemorySegment out = TaskOutput.allocate(1 << 20);
                    out.fill((byte) 7);
                    return out;
                }).onNode(node, Affinity.HARD).remote());
            }
            c.get(held);
            c.killNode(2);
            try (Stream<Path> stores = Files.list(memory)) {
                assertEquals(3, stores.count(), "the three living nodes' stores, before close");
            }
        }
        try (Stream<Path> left = Files.list(memory)) {
            assertEquals(List.of(), left.toList());
        }
    }
}
