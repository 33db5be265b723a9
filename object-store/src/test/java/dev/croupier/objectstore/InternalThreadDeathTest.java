package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An internal thread of the store that dies must fail the work waiting on it, with its error
 * as the cause, and every later call; never leave a caller waiting forever. Each test kills one
 * thread through the package-private {@link FaultHook} with an {@link AssertionError}, the kind
 * of {@link Error} Chronicle threw on the spill thread of an application started without flags.
 * Waiters are parked first where the test can see it, so the wake-up path is the one tested; a
 * regression shows up as this class's timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InternalThreadDeathTest {

    private static final int OBJECT = 100_000;

    @TempDir
    Path dir;

    private final CountDownLatch release = new CountDownLatch(1);

    /** A hook that, at {@code site}, waits for {@link #release} and then throws {@code error}. */
    private FaultHook dieAt(FaultHook.Site site, Error error) {
        return at -> {
            if (at == site) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw error;
            }
        };
    }

    private ObjectStore store(String name, FaultHook hook, Compression compression) {
        return ObjectStore.builder().name(name).capacityBytes(1 << 20).memoryDirectory(dir).spillDirectory(dir)
                .spillFileBytes(256 << 10).compression(compression).faultHook(hook).build();
    }

    @Test
    void spillThreadDeathFailsAllocationWaiters() throws Exception {
        AssertionError injected = new AssertionError("injected: the spill thread dies");
        try (ObjectStore store = store("dying-spill", dieAt(FaultHook.Site.SPILL_THREAD, injected), Compression.NONE)) {
            // ten objects fill the 1 MiB region; the spill thread is held before its first round
            List<ObjectId> ids = SpillAndRestoreTest.putMany(store, 10);
            CompletableFuture<WritableObject> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return store.create(TestStores.freshId(), OBJECT);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            while (store.metrics().queueLength() == 0 && !waiter.isDone()) {
                Thread.sleep(1);
            }
            release.countDown();

            StoreFailedException failure = failureOf(waiter);
            assertSame(injected, failure.getCause());
            assertEquals("croupier-spill-dying-spill", failure.thread());
            assertTrue(failure.getMessage().contains("'dying-spill'"), failure.getMessage());
            assertLaterCallsFail(store, ids.getFirst(), injected);
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    @Test
    void prefetchThreadDeathFailsRestoreWaiters() throws Exception {
        AssertionError injected = new AssertionError("injected: a prefetch thread dies");
        try (ObjectStore store = store("dying-prefetch", dieAt(FaultHook.Site.PREFETCH_RUN, injected),
                Compression.NONE)) {
            List<ObjectId> spilled = spilledObjects(store);
            CompletableFuture<Void> prefetch = store.prefetch(spilled);
            // the get waits for the prefetch thread, which is held, to restore the object
            CompletableFuture<PinnedObject> getter = new CompletableFuture<>();
            Thread reader = Thread.ofPlatform().start(() -> {
                try {
                    getter.complete(store.get(spilled.getFirst()));
                } catch (Throwable t) {
                    getter.completeExceptionally(t);
                }
            });
            while (reader.getState() != Thread.State.WAITING && reader.isAlive()) {
                Thread.sleep(1);
            }
            release.countDown();

            StoreFailedException failure = failureOf(getter);
            assertSame(injected, failure.getCause());
            assertTrue(failure.thread().startsWith("croupier-prefetch-dying-prefetch-"), failure.thread());
            assertSame(injected, failureOf(prefetch).getCause());
            assertLaterCallsFail(store, spilled.getLast(), injected);
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    @Test
    void prefetchThreadDeathOnACompressedObjectFailsItsFuture() throws Exception {
        AssertionError injected = new AssertionError("injected: a prefetch thread dies on an LZ4 object");
        release.countDown();
        try (ObjectStore store = store("dying-lz4", dieAt(FaultHook.Site.PREFETCH_ONE, injected), Compression.LZ4)) {
            List<ObjectId> spilled = spilledObjects(store);
            StoreFailedException failure = failureOf(store.prefetch(spilled.subList(0, 1)));
            assertSame(injected, failure.getCause());
            assertTrue(failure.thread().startsWith("croupier-prefetch-dying-lz4-"), failure.thread());
            assertLaterCallsFail(store, spilled.getLast(), injected);
        }
        assertEquals(0, TestStores.countFiles(dir));
    }

    /** Writes 2 MB through the 1 MiB store and returns the objects that ended up only on disk. */
    private static List<ObjectId> spilledObjects(ObjectStore store) throws Exception {
        List<ObjectId> ids = SpillAndRestoreTest.putMany(store, 20);
        store.awaitSpillIdle();
        List<ObjectId> spilled = new ArrayList<>();
        for (ObjectId id : ids) {
            boolean onDiskOnly;
            try {
                onDiskOnly = store.describe(id).file().getFileName().toString().startsWith("spill-");
            } catch (ObjectStoreException spilledCompressed) {
                onDiskOnly = true; // describe refuses objects spilled with LZ4
            }
            if (onDiskOnly) {
                spilled.add(id);
            }
        }
        assertTrue(spilled.size() >= 2, "some objects must be spilled: " + store.metrics());
        return spilled;
    }

    private static void assertLaterCallsFail(ObjectStore store, ObjectId existing, Throwable cause) throws Exception {
        assertSame(cause, assertThrows(StoreFailedException.class, () -> store.get(existing)).getCause());
        assertSame(cause, assertThrows(StoreFailedException.class,
                () -> store.create(TestStores.freshId(), OBJECT)).getCause());
        assertSame(cause, assertThrows(StoreFailedException.class, () -> store.contains(existing)).getCause());
        assertSame(cause, failureOf(store.prefetch(List.of(existing))).getCause());
        assertTrue(store.metrics().capacityBytes() > 0, "metrics stay readable on a failed store");
    }

    /** Waits for {@code future} (bounded by the class timeout) and returns the store failure it ended with. */
    private static StoreFailedException failureOf(CompletableFuture<?> future) throws InterruptedException {
        ExecutionException e = assertThrows(ExecutionException.class, future::get);
        return assertInstanceOf(StoreFailedException.class, e.getCause(), () -> "failed with " + e.getCause());
    }
}
