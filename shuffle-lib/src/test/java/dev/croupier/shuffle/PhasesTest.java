package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * A phase counts each task's bytes once its last output is done, as the runtime marks a task's
 * outputs in order: from the callback on that output, or from a look at the stats that comes
 * first, or while the callback is at it. A callback on another output may run while later ones
 * are still unmarked.
 */
class PhasesTest {

    /** An output whose settling and callbacks the test drives; it keeps its size once settled. */
    private static final class Output implements ObjectRef<Object> {
        final CompletableFuture<ObjectRef<Object>> done = new CompletableFuture<>();
        private final long size;
        private volatile boolean settled;
        /** Runs as the size is asked: a test holds a thread there. */
        volatile Runnable beforeSize = () -> { };

        Output(long size) {
            this.size = size;
        }

        void settle() {
            settled = true;
        }

        void runCallbacks() {
            done.complete(this);
        }

        @Override
        public long byteSize() {
            beforeSize.run();
            return settled ? size : -1;
        }

        @Override
        public boolean isDone() {
            return settled;
        }

        @Override
        public CompletableFuture<ObjectRef<Object>> whenDone() {
            return done;
        }

        @Override
        public ObjectId id() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Object> toCompletableFuture() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void release() {
        }
    }

    private static PhaseStats map(Phases phases) {
        return phases.stats().stream().filter(p -> p.name().equals("map")).findFirst().orElseThrow();
    }

    /** One map task of {@code phases} whose outputs hold {@code sizes} bytes, still pending. */
    private static List<Output> trackedMap(Phases phases, long... sizes) {
        List<Output> outputs = java.util.Arrays.stream(sizes).mapToObj(Output::new).toList();
        phases.track("map", outputs);
        return outputs;
    }

    @Test
    void aTaskIsCountedOnceItsLastOutputIsDone() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.getFirst().settle();
        outputs.getFirst().runCallbacks(); // a callback on the first, while the second is not marked yet
        assertEquals(0, map(phases).bytesOut());
        outputs.getLast().settle();
        outputs.getLast().runCallbacks();
        assertEquals(new PhaseStats("map", 1, map(phases).seconds(), 30), map(phases));
    }

    @Test
    void statsCountATaskWhoseOutputsAreDoneBeforeItsCallbackRan() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        assertEquals(30, map(phases).bytesOut(), "a caller who saw the outputs done asks before the settling thread ran the callback");
        outputs.getLast().runCallbacks();
        assertEquals(30, map(phases).bytesOut(), "counted once");
    }

    @Test
    void statsTakenWhileACallbackSumsATaskSeeTheTask() throws InterruptedException {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        CountDownLatch summing = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        Thread settling = new Thread(() -> outputs.getLast().runCallbacks(), "settling");
        outputs.getFirst().beforeSize = () -> {
            if (Thread.currentThread() == settling) {
                summing.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        settling.start();
        summing.await();
        assertEquals(30, map(phases).bytesOut(), "the stats, taken while the callback sums the task's bytes");
        resume.countDown();
        settling.join();
        assertEquals(30, map(phases).bytesOut(), "counted once");
    }

    @Test
    void anOutputFreedBeforeItWasMadeCountsNothing() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.getLast().settle(); // the first was released while pending, and never made
        outputs.getLast().runCallbacks();
        assertEquals(20, map(phases).bytesOut());
    }
}
