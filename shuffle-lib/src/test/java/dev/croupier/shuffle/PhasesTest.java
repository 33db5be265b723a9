package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A phase counts each task's bytes once, whichever comes first: the callback of its outputs
 * settling, the driver dropping its claim on them once every one is done, or a look at the
 * stats once every one is done. The driver's claim
 * outlives the count, since a consumer frees an output as soon as it has read it.
 */
class PhasesTest {

    /** An output whose settling, size and freeing the test drives. */
    private static final class Output implements ObjectRef<Object> {
        final CompletableFuture<ObjectRef<Object>> done = new CompletableFuture<>();
        private final long size;
        private volatile boolean ready;
        private volatile boolean released;

        Output(long size) {
            this.size = size;
        }

        void settle() {
            ready = true;
        }

        void runCallbacks() {
            done.complete(this);
        }

        @Override
        public long byteSize() {
            return ready && !released ? size : -1; // the driver's claim was the last: a consumer has read it
        }

        @Override
        public boolean isDone() {
            return ready && !released;
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
            released = true;
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
    void outputsAllDoneWhenTheDriverDropsThemAreCountedThenReleased() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        phases.release(outputs); // before the settling thread got to the callback
        assertTrue(outputs.stream().allMatch(o -> o.released));
        outputs.getFirst().runCallbacks();
        assertEquals(new PhaseStats("map", 1, map(phases).seconds(), 30), map(phases));
    }

    @Test
    void outputsPartlyDoneWhenTheDriverDropsThemAreReleasedByTheCount() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.getFirst().settle(); // the settling thread has marked the first output, not yet the second
        phases.release(outputs);
        assertFalse(outputs.stream().anyMatch(o -> o.released), "released before they were counted");
        outputs.getLast().settle();
        outputs.getFirst().runCallbacks();
        assertEquals(30, map(phases).bytesOut());
        assertTrue(outputs.stream().allMatch(o -> o.released));
    }

    @Test
    void aCallbackThatRanFirstIsNotCountedAgainWhenTheDriverDropsTheOutputs() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        outputs.getFirst().runCallbacks();
        phases.release(outputs);
        assertEquals(30, map(phases).bytesOut());
        assertTrue(outputs.stream().allMatch(o -> o.released));
    }

    @Test
    void outputsDroppedWhilePendingAreCountedByTheirCallbackThenReleased() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10);
        phases.release(outputs);
        assertEquals(0, map(phases).bytesOut(), "nothing to count before the task is done");
        assertFalse(outputs.getFirst().released);
        outputs.forEach(Output::settle);
        outputs.getFirst().runCallbacks();
        assertEquals(10, map(phases).bytesOut());
        assertTrue(outputs.getFirst().released);
    }

    @Test
    void aCallbackThatFindsALaterOutputNotDoneCountsOnceThatOneIs() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.getFirst().settle();
        outputs.getFirst().runCallbacks(); // at once: the task ended before it was tracked, its outputs still being marked
        phases.release(outputs);
        assertFalse(outputs.stream().anyMatch(o -> o.released), "counted, and released, before the second output was done");
        outputs.getLast().settle();
        outputs.getLast().runCallbacks();
        assertTrue(outputs.stream().allMatch(o -> o.released));
        assertEquals(30, map(phases).bytesOut());
    }

    @Test
    void statsCountATaskWhoseOutputsAreDoneBeforeTheirCallbackRan() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.getFirst().settle();
        assertEquals(0, map(phases).bytesOut(), "a task partly settled is not counted yet");
        outputs.getLast().settle(); // a caller who saw the outputs done asks before the settling thread ran the callback
        assertEquals(30, map(phases).bytesOut());
        outputs.getFirst().runCallbacks();
        assertEquals(30, map(phases).bytesOut(), "counted once");
    }

    @Test
    void outputsOfNoTrackedTaskAreReleasedAtOnce() {
        Output untracked = new Output(10);
        new Phases().release(List.of(untracked));
        assertTrue(untracked.released);
    }
}
