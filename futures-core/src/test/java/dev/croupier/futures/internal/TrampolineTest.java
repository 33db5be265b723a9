package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrampolineTest {

    @Test
    void waitersOfEntriesSettledTogetherRunAfterAllAreSettledAndBeforeTheAfterStep() {
        List<String> log = new ArrayList<>();
        Trampoline.settleTogether(() -> {
            for (String entry : List.of("a", "b", "c")) {
                log.add("settle " + entry);
                Trampoline.runAll(List.of(() -> log.add("waiter of " + entry)));
            }
        }, () -> log.add("after"));
        assertEquals(List.of("settle a", "settle b", "settle c", "waiter of a", "waiter of b", "waiter of c", "after"), log);
    }

    @Test
    void nestedInRunningWaitersItQueuesBehindWhatIsQueued() {
        List<String> log = new ArrayList<>();
        Trampoline.runAll(List.of(
                () -> Trampoline.settleTogether(() -> {
                    log.add("settle");
                    Trampoline.runAll(List.of(() -> log.add("waiter")));
                }, () -> log.add("after")),
                () -> log.add("queued before")));
        assertEquals(List.of("settle", "queued before", "waiter", "after"), log);
    }

    @Test
    void aFailureWhileSettlingStillRunsTheWaitersReleasedSoFarAndTheAfterStepThenIsThrown() {
        List<String> log = new ArrayList<>();
        IllegalStateException failure = new IllegalStateException("settling failed");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> Trampoline.settleTogether(() -> {
            Trampoline.runAll(List.of(() -> log.add("waiter of a"), () -> {
                throw new IllegalArgumentException("a waiter failed");
            }));
            throw failure;
        }, () -> log.add("after")));
        assertSame(failure, thrown);
        assertEquals(1, thrown.getSuppressed().length, "the waiter's failure rides along");
        assertEquals(List.of("waiter of a", "after"), log);
        List<String> later = new ArrayList<>();
        Trampoline.runAll(List.of(() -> later.add("runs at once")));
        assertEquals(List.of("runs at once"), later, "no queue is left behind on the thread");
    }
}
