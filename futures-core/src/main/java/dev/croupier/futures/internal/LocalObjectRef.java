package dev.croupier.futures.internal;

import dev.croupier.futures.ObjectRef;
import dev.croupier.objectstore.ObjectId;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A ref handle of the embedded cluster. Each instance holds one claim on its entry, dropped by
 * {@link #release()} or, failing that, by a {@link Cleaner} once the handle is unreachable.
 * Views returned by {@code get} keep their object pinned until the handle is released.
 * Thread-safe.
 */
final class LocalObjectRef<T> implements ObjectRef<T> {

    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "croupier-ref-cleaner");
        t.setDaemon(true);
        return t;
    });

    final ObjectEntry entry;
    private final EmbeddedCluster cluster;
    private final Release release;
    private final Cleaner.Cleanable cleanable;

    LocalObjectRef(EmbeddedCluster cluster, ObjectEntry entry) {
        this.cluster = cluster;
        this.entry = entry;
        entry.addHandle();
        this.release = new Release(cluster, entry);
        this.cleanable = CLEANER.register(this, release);
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
        if (release.released) {
            throw new IllegalStateException("ref to " + entry.id + " was released");
        }
        return (T) cluster.getValue(entry, timeout, release);
    }

    @Override
    public boolean isDone() {
        return entry.isDone();
    }

    @Override
    public CompletableFuture<T> toCompletableFuture() {
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
        private final EmbeddedCluster cluster;
        private final ObjectEntry entry;
        private volatile boolean released;
        private List<NodeStore.Reading> pins;

        Release(EmbeddedCluster cluster, ObjectEntry entry) {
            this.cluster = cluster;
            this.entry = entry;
        }

        /** Keeps a view's object pinned until release; closes it at once if already released. */
        void keepPinned(NodeStore.Reading reading) {
            synchronized (this) {
                if (!released) {
                    if (pins == null) {
                        pins = new ArrayList<>(1);
                    }
                    pins.add(reading);
                    return;
                }
            }
            reading.close();
        }

        @Override
        public void run() {
            List<NodeStore.Reading> toClose;
            synchronized (this) {
                released = true;
                toClose = pins;
                pins = null;
            }
            if (toClose != null) {
                toClose.forEach(NodeStore.Reading::close);
            }
            cluster.dropHandle(entry);
        }
    }
}
