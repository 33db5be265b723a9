package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.objectstore.ObjectExistsException;
import dev.croupier.objectstore.ObjectId;
import dev.croupier.objectstore.ObjectLocation;
import dev.croupier.objectstore.ObjectNotFoundException;
import dev.croupier.objectstore.ObjectReader;
import dev.croupier.objectstore.ObjectStore;
import dev.croupier.objectstore.PinnedObject;
import dev.croupier.objectstore.StoreClosedException;
import dev.croupier.objectstore.StoreMetrics;
import dev.croupier.objectstore.TemporaryClaim;
import dev.croupier.objectstore.WritableObject;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The objects of one node: small values on the heap, the rest in the node's shared-memory
 * {@link ObjectStore} (which spills them when memory runs short).
 *
 * <p>Design: like Ray's in-process store for small objects, values under
 * {@code smallObjectBytes} skip the store's allocator and pinning; they still belong to the
 * node and die with it, so lineage reconstruction treats both kinds alike. A task's output
 * written in place ({@link Scratch}) lives in the store under a scratch id; the object's own id
 * is an alias of it, resolved on every access. Thread-safe.
 */
final class NodeStore implements AutoCloseable {

    private final ObjectStore store;
    private final int smallObjectBytes;
    private final ConcurrentHashMap<ObjectId, byte[]> small = new ConcurrentHashMap<>();
    /** Object id to the scratch id its bytes were written under. */
    private final ConcurrentHashMap<ObjectId, ObjectId> adopted = new ConcurrentHashMap<>();
    /** High half of scratch ids: random, so they never meet the cluster's object ids. */
    private final long scratchTag = ThreadLocalRandom.current().nextLong();
    private final AtomicLong scratchCount = new AtomicLong();

    NodeStore(ObjectStore store, int smallObjectBytes) {
        this.store = store;
        this.smallObjectBytes = smallObjectBytes;
    }

    /**
     * Opens a node's store. A memory or spill folder the store cannot use is the user's
     * setting, so it is refused as bad input naming the folder, not thrown as a defect.
     */
    static NodeStore open(ObjectStore.Builder store, int smallObjectBytes) {
        try {
            return new NodeStore(store.build(), smallObjectBytes);
        } catch (IllegalArgumentException badFolder) {
            throw new CroupierException(ErrorCode.BAD_INPUT, badFolder.getMessage(), badFolder);
        }
    }

    /**
     * Claims a folder under {@code spillDirectory} for the spill files of this process's stores
     * ({@link TemporaryClaim}: what a killed process left there is
     * reclaimed by the next). A folder that cannot hold them is refused as bad input, naming it.
     */
    static TemporaryClaim claimSpillFolder(Path spillDirectory, String prefix) {
        Path base = spillDirectory != null ? spillDirectory : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            return TemporaryClaim.folder(base, prefix);
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "spill folder " + base
                    + " cannot hold the stores' files: " + e, e);
        }
    }

    /** An open view of a stored frame; close it to unpin. */
    interface Reading extends AutoCloseable {
        MemorySegment frame();

        @Override
        void close();

        /** A reading of heap memory, which needs no unpinning. */
        static Reading of(MemorySegment heapFrame) {
            MemorySegment frame = heapFrame.asReadOnly();
            return new Reading() {
                @Override
                public MemorySegment frame() {
                    return frame;
                }

                @Override
                public void close() {}
            };
        }
    }

    /**
     * Encodes {@code value} straight into this node's memory; returns the frame's size. A copy
     * the node already holds is kept: a re-executed task makes the same value (lineage rests on
     * that), and the copy may be pinned by a reader.
     */
    long put(ObjectId id, ValueCodecs.Encoded value) throws InterruptedException {
        long size = value.size();
        if (contains(id)) {
            return size;
        }
        if (size < smallObjectBytes) {
            byte[] bytes = new byte[(int) size];
            value.writeTo(MemorySegment.ofArray(bytes));
            small.put(id, bytes);
        } else {
            try (WritableObject object = store.create(id, size)) {
                value.writeTo(object.segment());
                object.seal();
            } catch (ObjectExistsException concurrentCopy) {
                // another task on this node fetched or made the same value meanwhile
            }
        }
        return size;
    }

    /** Store memory a running task writes its output into; see {@code TaskOutput}. */
    static final class Scratch {
        private final WritableObject object;
        private final MemorySegment payload;

        private Scratch(WritableObject object) {
            this.object = object;
            this.payload = object.segment().asSlice(ValueFrame.HEADER_BYTES);
        }

        MemorySegment payload() {
            return payload;
        }

        /** Frees the memory of an output the task did not return. */
        void abort() {
            object.close();
        }
    }

    /** Whether a frame of {@code frameBytes} goes to the store (else it stays on the heap). */
    boolean isStored(long frameBytes) {
        return frameBytes >= smallObjectBytes;
    }

    /** Allocates a segment frame of {@code payloadBytes} under a fresh scratch id, header written. */
    Scratch allocateScratch(long payloadBytes) throws InterruptedException {
        ObjectId scratchId = new ObjectId(scratchTag, scratchCount.incrementAndGet());
        WritableObject object = store.create(scratchId, ValueFrame.HEADER_BYTES + payloadBytes);
        ValueFrame.writeHeader(object.segment(), ValueFrame.SEGMENT, 0);
        return new Scratch(object);
    }

    /**
     * Seals a task's scratch output in place as object {@code id}; returns the frame's size. As
     * with {@link #put}, a copy the node already holds wins and the scratch is freed.
     */
    long adopt(ObjectId id, Scratch scratch) {
        long size = scratch.object.segment().byteSize();
        if (contains(id)) {
            scratch.abort();
            return size;
        }
        scratch.object.sealListedAs(id); // same-host readers know it by the object's id
        if (adopted.putIfAbsent(id, scratch.object.id()) != null) {
            store.delete(scratch.object.id()); // a speculative twin on this node adopted first
        }
        return size;
    }

    /** Stores a copy of a frame read from another node. */
    void putFrame(ObjectId id, MemorySegment frame) throws InterruptedException {
        long size = frame.byteSize();
        if (contains(id)) {
            return;
        }
        if (size < smallObjectBytes) {
            small.put(id, frame.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        } else {
            try (WritableObject object = store.create(id, size)) {
                MemorySegment.copy(frame, 0, object.segment(), 0, size);
                object.seal();
            } catch (ObjectExistsException concurrentCopy) {
                // another task on this node fetched the same value meanwhile
            }
        }
    }

    /** Memory a frame arriving in chunks is written into, then stored as its object. */
    interface Incoming {
        MemorySegment frame();

        /** Stores the frame as the object (a copy that arrived meanwhile wins). */
        void commit();

        /** Frees the memory of a frame that did not arrive whole. */
        void abort();
    }

    /**
     * Memory for a frame of {@code size} bytes that a pull is about to receive; null if this
     * node already holds {@code id}.
     */
    Incoming receive(ObjectId id, long size) throws InterruptedException {
        if (contains(id)) {
            return null;
        }
        if (size < smallObjectBytes) {
            byte[] bytes = new byte[Math.toIntExact(size)];
            return new Incoming() {
                @Override
                public MemorySegment frame() {
                    return MemorySegment.ofArray(bytes);
                }

                @Override
                public void commit() {
                    small.putIfAbsent(id, bytes);
                }

                @Override
                public void abort() {}
            };
        }
        WritableObject object;
        try {
            object = store.create(id, size);
        } catch (ObjectExistsException concurrentCopy) {
            return null;
        }
        return new Incoming() {
            @Override
            public MemorySegment frame() {
                return object.segment();
            }

            @Override
            public void commit() {
                object.seal();
                object.close();
            }

            @Override
            public void abort() {
                object.close();
            }
        };
    }

    boolean contains(ObjectId id) {
        return small.containsKey(id) || store.contains(inStore(id));
    }

    /** Pins and returns the frame of {@code id}, or null if this node does not hold it. */
    Reading open(ObjectId id) throws InterruptedException {
        byte[] bytes = small.get(id);
        if (bytes != null) {
            return Reading.of(MemorySegment.ofArray(bytes));
        }
        PinnedObject pinned;
        try {
            pinned = store.get(inStore(id));
        } catch (ObjectNotFoundException absent) {
            return null;
        } catch (StoreClosedException nodeDied) {
            // as reading a dead node's memory does: callers treat it as "closed under us"
            throw new IllegalStateException(nodeDied.getMessage(), nodeDied);
        }
        return new Reading() {
            @Override
            public MemorySegment frame() {
                return pinned.segment();
            }

            @Override
            public void close() {
                pinned.close();
            }
        };
    }

    /** An object read range by range, to send it to another node; close it to unpin. */
    interface Streaming extends AutoCloseable {
        /** The frame's size in bytes. */
        long size();

        /**
         * Bytes {@code [offset, offset + length)} of the frame (length at most
         * {@link ObjectReader#MAX_READ_BYTES}), valid until the next call.
         */
        MemorySegment chunk(long offset, int length) throws IOException;

        @Override
        void close();
    }

    /**
     * Opens the frame of {@code id} for sending, or returns null if this node does not hold it.
     * A spilled object is read from its spill file, not restored: its bytes are leaving, and a
     * restore would evict objects this node's tasks still need.
     */
    Streaming stream(ObjectId id) throws InterruptedException {
        byte[] bytes = small.get(id);
        if (bytes != null) {
            MemorySegment frame = MemorySegment.ofArray(bytes).asReadOnly();
            return new Streaming() {
                @Override
                public long size() {
                    return frame.byteSize();
                }

                @Override
                public MemorySegment chunk(long offset, int length) {
                    return frame.asSlice(offset, length);
                }

                @Override
                public void close() {}
            };
        }
        ObjectReader reader;
        try {
            reader = store.openReader(inStore(id));
        } catch (ObjectNotFoundException absent) {
            return null;
        } catch (StoreClosedException nodeDied) {
            throw new IllegalStateException(nodeDied.getMessage(), nodeDied);
        }
        return new Streaming() {
            @Override
            public long size() {
                return reader.size();
            }

            @Override
            public MemorySegment chunk(long offset, int length) throws IOException {
                return reader.read(offset, length);
            }

            @Override
            public void close() {
                reader.close();
            }
        };
    }

    /**
     * Pins {@code id} and says where its frame lies in a file another process on this host can
     * map: the store's memory, or its spill file (it is not restored for a copy that leaves);
     * null if the node does not hold it in its store (a small value lives on the heap). Close
     * the lending to unpin.
     */
    Lending lend(ObjectId id) throws InterruptedException {
        if (small.containsKey(id)) {
            return null;
        }
        Streaming pin = stream(id);
        if (pin == null) {
            return null;
        }
        try {
            return new Lending(pin, store.describe(inStore(id)));
        } catch (RuntimeException notInAFile) {
            pin.close();
            throw notInAFile;
        }
    }

    /** A pinned object and where its bytes lie; close to unpin. */
    record Lending(Streaming pin, ObjectLocation where) implements AutoCloseable {
        @Override
        public void close() {
            pin.close();
        }
    }

    /** Whether other processes on this host can map this store's memory (its file). */
    boolean sharesMemory() {
        return store.sharesMemory();
    }

    /** The store's directory file, for same-host readers; null if it keeps none. */
    Path directoryFile() {
        return store.directoryFile();
    }

    /** Starts restoring those of {@code ids} that this node's store has spilled; returns at once. */
    void prefetch(List<ObjectId> ids) {
        if (!ids.isEmpty()) {
            store.prefetch(adopted.isEmpty() ? ids : ids.stream().map(this::inStore).toList());
        }
    }

    void delete(ObjectId id) {
        ObjectId scratchId = adopted.remove(id);
        if (scratchId != null) {
            store.delete(scratchId);
        } else if (small.remove(id) == null) {
            store.delete(id);
        }
    }

    /** The id under which the store holds object {@code id}. */
    private ObjectId inStore(ObjectId id) {
        ObjectId scratchId = adopted.get(id);
        return scratchId == null ? id : scratchId;
    }

    /** Objects held: small ones plus those in the store (in memory or spilled). */
    long objectCount() {
        StoreMetrics m = store.metrics();
        return small.size() + m.objectsInMemory() + m.objectsSpilled() + m.objectsFallback();
    }

    StoreMetrics metrics() {
        return store.metrics();
    }

    @Override
    public void close() {
        small.clear();
        adopted.clear();
        store.close();
    }
}
