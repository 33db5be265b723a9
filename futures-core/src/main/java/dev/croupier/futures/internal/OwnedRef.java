package dev.croupier.futures.internal;

import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A ref handle of an owner (either backend). Each instance holds one claim on its entry, dropped by
 * {@link #release()} or, failing that, by a {@link Cleaner} once the handle is unreachable.
 * A view returned by {@code get} keeps its object pinned until the handle is released; later
 * gets return the same view.
 * Thread-safe.
 */
final class OwnedRef<T> implements ObjectRef<T> {

    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "croupier-ref-cleaner");
        t.setDaemon(true);
        return t;
    });

    final OwnedObject entry;
    private final OwnerCluster cluster;
    private final Release release;
    private final Cleaner.Cleanable cleanable;

    OwnedRef(OwnerCluster cluster, OwnedObject entry) {
        this.cluster = cluster;
        this.entry = entry;
        entry.addHandle();
        this.release = new Release(cluster, entry);
        this.cleanable = CLEANER.register(this, release);
    }

    OwnerCluster owner() {
        return cluster;
    }

    @Override
    public ObjectId id() {
        return entry.id;
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
            // later use of it), its Cleaner drop the last claim, and the value be freed before
            // it is made: the get then waits forever. c.task(...).remote().get() is that case.
            Reference.reachabilityFence(this);
        }
    }

    private void checkNotReleased() {
        if (release.released) {
            throw new IllegalStateException("ref to " + entry.id + " was released");
        }
    }

    @Override
    public boolean isDone() {
        return entry.isDone();
    }

    @Override
    public long byteSize() {
        return entry.isDone() ? entry.size() : -1;
    }

    @Override
    public CompletableFuture<ObjectRef<T>> whenDone() {
        checkNotReleased();
        CompletableFuture<ObjectRef<T>> future = new CompletableFuture<>();
        if (entry.isDone()) {
            future.complete(this);
        } else {
            entry.whenSettled(() -> future.complete(this));
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
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "ObjectRef(" + entry.id + ")";
    }

    /** The handle's claim and its pins; must not refer to the handle itself (Cleaner rule). */
    static final class Release implements Runnable {
        private final OwnerCluster cluster;
        private final OwnedObject entry;
        private volatile boolean released;
        private NodeStore.Reading pin;
        private Object view;

        Release(OwnerCluster cluster, OwnedObject entry) {
            this.cluster = cluster;
            this.entry = entry;
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
            throw new IllegalStateException("ref to " + entry.id + " was released");
        }

        @Override
        public void run() {
            NodeStore.Reading toClose;
            synchronized (this) {
                released = true;
                toClose = pin;
                pin = null;
                view = null;
            }
            if (toClose != null) {
                toClose.close();
            }
            cluster.dropHandle(entry);
        }
    }
}
