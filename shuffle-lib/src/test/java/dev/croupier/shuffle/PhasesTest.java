package dev.croupier.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A phase counts each task's bytes once, whichever comes first: the callback of its outputs
 * settling, or the driver dropping its claim on them once they are done. The callback may run
 * after a task submitted once the outputs were done has freed them.
 */
class PhasesTest {

    /** An output whose settling, size and freeing the test drives. */
    private static final class Output implements ObjectRef<Object> {
        final CompletableFuture<ObjectRef<Object>> done = new CompletableFuture<>();
        private final long size;
        private volatile boolean ready;
        private volatile boolean freed;

        Output(long size) {
            this.size = size;
        }

        void settle() {
            ready = true;
        }

        void runCallbacks() {
            done.complete(this);
        }

        void free() {
            freed = true;
        }

        @Override
        public long byteSize() {
            return ready && !freed ? size : -1;
        }

        @Override
        public boolean isDone() {
            return ready && !freed;
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
    void outputsFreedBeforeTheirCallbackRanAreCountedWhenTheDriverDropsThem() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        phases.countIfDone(outputs); // the driver, about to release them
        outputs.forEach(Output::free); // a consumer ran and freed them before the settling thread got to the callback
        outputs.getFirst().runCallbacks();
        assertEquals(new PhaseStats("map", 1, map(phases).seconds(), 30), map(phases));
    }

    @Test
    void aCallbackThatRanFirstIsNotCountedAgainWhenTheDriverDropsTheOutputs() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10, 20);
        outputs.forEach(Output::settle);
        outputs.getFirst().runCallbacks();
        phases.countIfDone(outputs);
        assertEquals(30, map(phases).bytesOut());
    }

    @Test
    void outputsDroppedWhilePendingAreCountedByTheirCallback() {
        Phases phases = new Phases();
        List<Output> outputs = trackedMap(phases, 10);
        phases.countIfDone(outputs);
        assertEquals(0, map(phases).bytesOut(), "nothing to count before the task is done");
        outputs.forEach(Output::settle);
        outputs.getFirst().runCallbacks();
        assertEquals(10, map(phases).bytesOut());
    }
}
