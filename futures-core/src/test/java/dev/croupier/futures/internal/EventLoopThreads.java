package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Collection;
import java.util.List;

/** The threads of {@link EventLoops} that tests watch end. */
public final class EventLoopThreads {
    private EventLoopThreads() {}

    /** Live threads of loops made as {@code new EventLoops(name)}. */
    public static List<Thread> live(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(name + "-")).toList();
    }

    /** Asserts that every one of {@code threads} ends, waiting at most 10 s for each. */
    public static void assertEnded(Collection<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join(10_000);
            assertFalse(t.isAlive(), t.getName() + " still runs");
        }
    }
}
