package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A ref handle of an owner (either backend). Each instance holds one claim on its entry, dropped by
 * {@link #release()} or, failing that, once the handle is unreachable: its {@link Release} is a
 * phantom reference to it, kept reachable by the entry, and run by one daemon thread when
 * the collector enqueues it. (A {@link java.lang.ref.Cleaner} did the same with a second
 * object per handle and one list for all handles of the JVM: a quarter of the driver's time
 * per object when scheduling the 100 TB graph.)
 * A view returned by {@code get} keeps its object pinned until the handle is released; later
 * gets return the same view.
 * Thread-safe.
 */
final class OwnedRef<T> implements ObjectRef<T> {

    final OwnedObject entry;
    private final OwnerCluster cluster;
    private final Release release;

    OwnedRef(OwnerCluster cluster, OwnedObject entry) {
        this.cluster = cluster;
        this.entry = entry;
        this.release = new Release(this, cluster, entry);
        entry.addHandle(release);
    }

    OwnerCluster owner() {
        return cluster;
    }

    @Override
    public ObjectId id() {
        return entry.id();
    }

    @Override
    public T get() {
        return get(null);
    }

    @Override
    @SuppressWarnings("unchecked")
    public T get(Duration timeout) {
        checkNotReleased();
        try {
            return (T) cluster.getValue(entry, timeout, release);
        } finally {
            // Without this the handle may become unreachable while get waits (the JIT sees no
            // later use of it), its release run on collection and drop the last claim, and the
            // value be freed before it is made: the get then waits forever.
            // c.task(...).remote().get() is that case.
            Reference.reachabilityFence(this);
        }
    }

    private void checkNotReleased() {
        if (release.released) {
            throw new IllegalStateException("ref to " + entry.id() + " was released");
        }
    }

    @Override
    public boolean isDone() {
        return entry.isDone();
    }

    @Override
    public long byteSize() {
        return entry.doneSize();
    }

    @Override
    public CompletableFuture<ObjectRef<T>> whenDone() {
        checkNotReleased();
        CompletableFuture<ObjectRef<T>> future = new CompletableFuture<>();
        if (entry.isDone()) {
            future.complete(this);
        } else {
            entry.whenSettled(() -> {
                // settled, even if freed since (a consumer may free it before this runs)
                if (entry.doneSize() >= 0) {
                    future.complete(this);
                } else { // freed unmade: this ref was released, and nothing else wanted the value
                    future.completeExceptionally(new CroupierException(ErrorCode.CANCELLED,
                            "ref to " + entry.id() + " was released before its value was made"));
                }
            });
        }
        return future;
    }

    @Override
    public CompletableFuture<T> toCompletableFuture() {
        checkNotReleased();
        CompletableFuture<T> future = new CompletableFuture<>();
        boolean lost = entry.whenSettled(() -> cluster.callbacks().execute(() -> {
            try {
                future.complete(get());
            } catch (RuntimeException e) {
                future.completeExceptionally(e);
            }
        }));
        if (lost) {
            cluster.rebuild(entry);
        }
        return future;
    }

    @Override
    public void release() {
        release.clear();
        release.run();
    }

    @Override
    public String toString() {
        return "ObjectRef(" + entry.id() + ")";
    }

    /**
     * The handle's claim and its pins; a phantom reference to the handle, so it must not
     * refer to the handle itself. Runs once: on {@code release()} or once the handle is
     * collected, whichever comes first.
     */
    static final class Release extends PhantomReference<OwnedRef<?>> implements Runnable {

        private static final ReferenceQueue<OwnedRef<?>> COLLECTED = new ReferenceQueue<>();

        static {
            Thread.ofPlatform().daemon().name("croupier-ref-cleaner").start(Release::runCollected);
        }

        private final OwnerCluster cluster;
        private final OwnedObject entry;
        private volatile boolean released;
        private NodeStore.Reading pin;
        private Object view;

        Release(OwnedRef<?> handle, OwnerCluster cluster, OwnedObject entry) {
            super(handle, COLLECTED);
            this.cluster = cluster;
            this.entry = entry;
        }

        private static void runCollected() {
            while (true) {
                try {
                    ((Release) COLLECTED.remove()).run();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException | Error e) {
                    // a closed cluster's free, say: the handle is dropped all the same
                }
            }
        }

        /** The view an earlier get returned, still pinned; null if none. */
        synchronized Object pinnedView() {
            return view;
        }

        /**
         * Keeps a view's object pinned until release and remembers the view, so later gets
         * return it without pinning again. Returns the view to hand out: the one already kept
         * if another thread won the race, in which case {@code reading} is closed.
         */
        Object keepPinned(NodeStore.Reading reading, Object value) {
            synchronized (this) {
                if (!released && pin == null) {
                    pin = reading;
                    view = value;
                    return value;
                }
                if (!released) {
                    Object kept = view;
                    reading.close();
                    return kept;
                }
            }
            reading.close();
            throw new IllegalStateException("ref to " + entry.id() + " was released");
        }

        @Override
        public void run() {
            NodeStore.Reading toClose;
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
                toClose = pin;
                pin = null;
                view = null;
            }
            if (toClose != null) {
                toClose.close();
            }
            cluster.dropHandle(entry, this);
        }
    }
}
