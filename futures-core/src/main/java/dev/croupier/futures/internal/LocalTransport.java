package dev.croupier.futures.internal;

import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.StoreClosedException;

/**
 * The transport of the embedded cluster: nodes share a JVM, so a dispatch is a queue insert
 * and a fetch is one memory copy from the source store's pinned view into the target store.
 * Thread-safe (stateless).
 */
final class LocalTransport implements Transport {

    @Override
    public boolean dispatch(TaskSpec.Attempt attempt) {
        return attempt.node.enqueue(attempt);
    }

    @Override
    public long fetch(ObjectId id, Node from, Node to) throws InterruptedException {
        try (NodeStore.Reading reading = from.store().open(id)) {
            if (reading == null) {
                return -1;
            }
            long bytes = reading.frame().byteSize();
            to.store().putFrame(id, reading.frame());
            to.recordFetched(bytes);
            return bytes;
        } catch (IllegalStateException | StoreClosedException closedUnderUs) {
            if (!from.alive()) {
                return -1;
            }
            throw closedUnderUs;
        }
    }
}
