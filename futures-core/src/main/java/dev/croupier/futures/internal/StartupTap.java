package dev.croupier.futures.internal;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A test seam: an action run once, in a node that is starting, after its port serves and
 * before its store opens, given the node's address. Tests use it to probe the node in that
 * window (readiness must not say SERVING yet). The start waits for the action. Nothing is armed
 * unless a test arms it. Thread-safe; one tap at a time.
 */
public final class StartupTap {

    private static final AtomicReference<Consumer<String>> ARMED = new AtomicReference<>();

    private StartupTap() {}

    /** Arms the tap for the next node that starts in this JVM; it fires once. */
    public static void arm(Consumer<String> action) {
        ARMED.set(action);
    }

    static void storeOpening(String address) {
        Consumer<String> action = ARMED.getAndSet(null);
        if (action != null) {
            action.accept(address);
        }
    }
}
