package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * A node's store of immutable objects in shared memory (or, for a store only its own process
 * reads, in the process's own memory: {@link Builder#sharedMemory}), with a hard memory capacity,
 * spilling to fused files on disk, restore and prefetch.
 *
 * <p>Objects are written once ({@link #create} then {@link WritableObject#seal()}), then read
 * through pinned read-only views ({@link #get}). When memory is full, allocations wait in a
 * queue (task outputs before prefetches) while unpinned objects are spilled, least recently
 * used first; if nothing can be spilled the allocation falls back to a file on disk, so no
 * allocation fails because the store is full. See {@code docs/object-store.md}.
 *
 * <p>Thread-safety: thread-safe; all methods may be called from any thread.
 */
public final class ObjectStore implements AutoCloseable {

    /** Default memory capacity: 1 GiB. */
    public static final long DEFAULT_CAPACITY_BYTES = 1L << 30;
    /** Smallest accepted capacity: 4 KiB. */
    public static final long MIN_CAPACITY_BYTES = 4096;
    /** Largest accepted capacity: 64 TiB. */
    public static final long MAX_CAPACITY_BYTES = 1L << 46;
    /** Default target size of a fused spill file: 64 MiB. */
    public static final long DEFAULT_SPILL_FILE_BYTES = 64L << 20;
    /** Smallest accepted spill file target: 64 KiB (small files only make sense in tests). */
    public static final long MIN_SPILL_FILE_BYTES = 64L << 10;
    /** Largest accepted spill file target: 1 TiB. */
    public static final long MAX_SPILL_FILE_BYTES = 1L << 40;
    /** Default compression of spilled objects: none. */
    public static final Compression DEFAULT_COMPRESSION = Compression.NONE;
    /** Preferred memory directory where it exists: tmpfs shared memory. */
    public static final Path SHARED_MEMORY_DIRECTORY = Path.of("/dev/shm");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final AtomicInteger UNNAMED = new AtomicInteger();

    private final StoreEngine engine;
    private final Config config;

    /** The settings a built store reports back. */
    private record Config(String name, long capacityBytes) {
    }

    private ObjectStore(Config config, StoreEngine engine) {
        this.config = config;
        this.engine = engine;
    }

    /**
     * Returns a builder with every knob at its default.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the store's name.
     *
     * @return the name given to the builder (or generated)
     */
    public String name() {
        return config.name;
    }

    /**
     * Returns the hard capacity of the memory region.
     *
     * @return capacity in bytes
     */
    public long capacityBytes() {
        return config.capacityBytes;
    }

    /**
     * Creates an object for a task output; may wait in the allocation queue while memory is
     * spilled, and falls back to a disk file rather than fail because memory is full.
     *
     * @param id the new object's id, not in use
     * @param size its size in bytes, 0 or more
     * @return the writable object; seal it to publish, close it to abort
     * @throws InterruptedException if interrupted while waiting for memory
     * @throws ObjectExistsException if {@code id} is in use
     * @throws SpillFailedException if memory is full and the fallback file cannot be written
     */
    public WritableObject create(ObjectId id, long size) throws InterruptedException {
        return create(id, size, Priority.TASK_OUTPUT);
    }

    /**
     * Creates an object with the given allocation priority. See {@link #create(ObjectId, long)}.
     *
     * @param id the new object's id, not in use
     * @param size its size in bytes, 0 or more
     * @param priority the allocation queue priority
     * @return the writable object; seal it to publish, close it to abort
     * @throws InterruptedException if interrupted while waiting for memory
     */
    public WritableObject create(ObjectId id, long size, Priority priority) throws InterruptedException {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(priority, "priority");
        if (size < 0) {
            throw new IllegalArgumentException("size of object " + id + " must be >= 0, got " + size);
        }
        return engine.create(id, size, priority);
    }

    /**
     * Creates an object holding a copy of {@code bytes} and seals it.
     *
     * @param id the new object's id, not in use
     * @param bytes the contents to copy
     * @return {@code id}
     * @throws InterruptedException if interrupted while waiting for memory
     */
    public ObjectId put(ObjectId id, MemorySegment bytes) throws InterruptedException {
        Objects.requireNonNull(bytes, "bytes");
        try (WritableObject object = create(id, bytes.byteSize())) {
            MemorySegment.copy(bytes, 0, object.segment(), 0, bytes.byteSize());
            object.seal();
        }
        return id;
    }

    /**
     * Returns a pinned read-only view of a sealed object, restoring it from disk first if it
     * was spilled. Close the view to unpin.
     *
     * @param id the object
     * @return the pinned view
     * @throws InterruptedException if interrupted while waiting for memory to restore into
     * @throws ObjectNotFoundException if the object does not exist or is not sealed
     */
    public PinnedObject get(ObjectId id) throws InterruptedException {
        Objects.requireNonNull(id, "id");
        return engine.get(id);
    }

    /**
     * Tells whether a sealed object with this id is in the store (in memory or on disk).
     *
     * @param id the object
     * @return true if {@link #get} would find it
     */
    public boolean contains(ObjectId id) {
        Objects.requireNonNull(id, "id");
        return engine.contains(id);
    }

    /**
     * Returns a sealed object's size.
     *
     * @param id the object
     * @return its size in bytes
     * @throws ObjectNotFoundException if the object does not exist or is not sealed
     */
    public long sizeOf(ObjectId id) {
        Objects.requireNonNull(id, "id");
        return engine.sizeOf(id);
    }

    /**
     * Says where a sealed object's bytes are, so another process can map them without a copy:
     * the memory region file, a fallback file, or (for an object spilled without compression)
     * its spill file. The range stays valid while a {@link PinnedObject} from {@link #get} or an
     * {@link ObjectReader} from {@link #openReader} is held on the object.
     * An object spilled with LZ4, or held in the private memory of a store built with
     * {@link Builder#sharedMemory} false, cannot be mapped: {@link #get} it.
     *
     * @param id the object
     * @return the file, offset and length of its bytes
     * @throws ObjectNotFoundException if the object does not exist or is not sealed
     * @throws ObjectStoreException if the object cannot be mapped, as above
     */
    public ObjectLocation describe(ObjectId id) {
        Objects.requireNonNull(id, "id");
        return engine.describe(id);
    }

    /**
     * Whether {@link #SHARED_MEMORY_DIRECTORY} exists, is writable and has room for a store of
     * {@code capacityBytes}: where a store with the default memory directory keeps its memory
     * file (else in {@code java.io.tmpdir}, on disk). A container's /dev/shm is often 64 MiB.
     *
     * @param capacityBytes the store's capacity
     * @return whether the shared-memory folder holds it
     */
    public static boolean sharedMemoryDirectoryHolds(long capacityBytes) {
        try {
            return Files.isDirectory(SHARED_MEMORY_DIRECTORY) && Files.isWritable(SHARED_MEMORY_DIRECTORY)
                    && Files.getFileStore(SHARED_MEMORY_DIRECTORY).getUsableSpace() >= capacityBytes;
        } catch (IOException e) {
            return false; // /dev/shm unusable
        }
    }

    /**
     * Whether other processes can map this store's memory: a file of the memory directory.
     * False for a store built with {@link Builder#sharedMemory} false that got private memory.
     *
     * @return whether {@link #describe} can name the file of an object held in memory
     */
    public boolean sharesMemory() {
        return engine.sharesMemory();
    }

    /**
     * Returns the store's directory file ({@link ObjectDirectory}): where its sealed objects lie
     * in its memory region, for readers on this host; null unless the builder asked for one.
     *
     * @return the file, or null
     */
    public Path directoryFile() {
        return engine.directoryFile();
    }

    /**
     * Deletes an object: frees its memory or marks its spilled bytes dead. If it is pinned the
     * free happens at the last unpin; the id may be reused at once.
     *
     * @param id the object
     * @return false if there was no such object
     */
    public boolean delete(ObjectId id) {
        Objects.requireNonNull(id, "id");
        return engine.delete(id);
    }

    /**
     * Restores spilled objects in the background, at lower priority than task outputs, so a
     * later {@link #get} finds them in memory. Missing objects are ignored; the future completes
     * when every restore has finished or been given up for lack of memory.
     *
     * @param ids the objects a queued task will need
     * @return a future completing when the prefetch is over
     */
    public CompletableFuture<Void> prefetch(Collection<ObjectId> ids) {
        Objects.requireNonNull(ids, "ids");
        return engine.prefetch(ids);
    }

    /**
     * Pins a sealed object for reading in ranges where it lies: from memory if it is resident,
     * else from its spill file without restoring it (see {@link ObjectReader}). Close the reader
     * to unpin.
     *
     * @param id the object
     * @return the reader
     * @throws ObjectNotFoundException if the object does not exist or is not sealed
     * @throws InterruptedException if interrupted while restoring an LZ4-spilled object
     */
    public ObjectReader openReader(ObjectId id) throws InterruptedException {
        Objects.requireNonNull(id, "id");
        return engine.openReader(id);
    }

    /**
     * Returns a consistent snapshot of the store's counters.
     *
     * @return the metrics
     */
    public StoreMetrics metrics() {
        return engine.metrics();
    }

    /**
     * Frees all memory at once (unmaps the region), deletes every file of the store and stops
     * its threads. Views and writable segments handed out become inaccessible. Idempotent.
     */
    @Override
    public void close() {
        engine.close();
    }

    /** Waits until no spill write is in flight; for tests that observe deferred frees. */
    void awaitSpillIdle() throws InterruptedException {
        engine.awaitSpillIdle();
    }

    @Override
    public String toString() {
        return "ObjectStore[" + config.name + ", capacity " + config.capacityBytes + " bytes]";
    }

    /**
     * Configures and builds an {@link ObjectStore}. Every knob is checked at {@link #build()}.
     *
     * <p>Thread-safety: not thread-safe; use from one thread.
     */
    public static final class Builder {
        private long capacityBytes = DEFAULT_CAPACITY_BYTES;
        private Path memoryDirectory;
        private Path spillDirectory;
        private long spillFileBytes = DEFAULT_SPILL_FILE_BYTES;
        private Compression compression = DEFAULT_COMPRESSION;
        private String name;
        private boolean directory;
        private boolean sharedMemory = true;
        private Semaphore spillGate;
        private FaultHook faults = FaultHook.NONE;

        private Builder() {
        }

        /** Test seam: the spill thread takes a permit of {@code gate} before each batch write. */
        Builder spillGate(Semaphore gate) {
            this.spillGate = gate;
            return this;
        }

        /** Test seam: the store's internal threads call {@code hook}, which may throw to kill them. */
        Builder faultHook(FaultHook hook) {
            this.faults = hook;
            return this;
        }

        /**
         * Sets the hard capacity of in-memory object bytes.
         *
         * @param bytes between {@link #MIN_CAPACITY_BYTES} and {@link #MAX_CAPACITY_BYTES}
         * @return this builder
         */
        public Builder capacityBytes(long bytes) {
            this.capacityBytes = bytes;
            return this;
        }

        /**
         * Sets where the mapped memory file lives; default {@code /dev/shm} if it exists and has
         * room for the capacity, else {@code java.io.tmpdir}.
         *
         * @param directory an existing writable directory
         * @return this builder
         */
        public Builder memoryDirectory(Path directory) {
            this.memoryDirectory = directory;
            return this;
        }

        /**
         * Sets where spill and fallback files live; default {@code java.io.tmpdir}.
         *
         * @param directory an existing writable directory
         * @return this builder
         */
        public Builder spillDirectory(Path directory) {
            this.spillDirectory = directory;
            return this;
        }

        /**
         * Sets the target size of a fused spill file.
         *
         * @param bytes between {@link #MIN_SPILL_FILE_BYTES} and {@link #MAX_SPILL_FILE_BYTES}
         * @return this builder
         */
        public Builder spillFileBytes(long bytes) {
            this.spillFileBytes = bytes;
            return this;
        }

        /**
         * Sets the compression of spilled objects.
         *
         * @param compression NONE or LZ4
         * @return this builder
         */
        public Builder compression(Compression compression) {
            this.compression = compression;
            return this;
        }

        /**
         * Whether other processes may map the store's memory. True (the default) keeps it in a
         * file of the memory directory, which {@link ObjectStore#describe} names. False keeps it
         * in this process's own anonymous memory where the platform gives it (Linux, with native
         * access; a file otherwise): its fresh pages cost less to touch than a tmpfs file's, it
         * needs no room in the memory directory, and a killed process leaves nothing there.
         * {@link ObjectStore#describe} then refuses objects held in memory. A store read only by
         * its own process, like each node of an embedded cluster, has no use for a file.
         *
         * @param shared whether other processes may map the store's memory
         * @return this builder
         */
        public Builder sharedMemory(boolean shared) {
            this.sharedMemory = shared;
            return this;
        }

        /**
         * Keeps a directory of the objects in the memory region in a shared-memory file beside
         * it ({@link ObjectDirectory}), so processes on this host copy them without a call to this
         * one. Default false: a store read only by its own process has no use for it. Needs
         * {@link #sharedMemory} true.
         *
         * @param listed whether to keep the directory
         * @return this builder
         */
        public Builder directory(boolean listed) {
            this.directory = listed;
            return this;
        }

        /**
         * Sets the store's name, used in file names and messages; must be unique among live
         * stores on the machine. Default: {@code store-<pid>-<n>}.
         *
         * @param name 1 to 64 characters among letters, digits, '.', '_' and '-'
         * @return this builder
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Checks every knob, prepares the store's directories (deleting any leftovers of an
         * earlier store with the same name) and maps its memory.
         *
         * @return the open store
         * @throws IllegalArgumentException naming the first bad knob, its value and range
         * @throws ObjectStoreException if the directories or memory cannot be set up
         */
        public ObjectStore build() {
            if (capacityBytes < MIN_CAPACITY_BYTES || capacityBytes > MAX_CAPACITY_BYTES) {
                throw new IllegalArgumentException("capacityBytes = " + capacityBytes + " is out of range ["
                        + MIN_CAPACITY_BYTES + ", " + MAX_CAPACITY_BYTES + "]");
            }
            if (spillFileBytes < MIN_SPILL_FILE_BYTES || spillFileBytes > MAX_SPILL_FILE_BYTES) {
                throw new IllegalArgumentException("spillFileBytes = " + spillFileBytes + " is out of range ["
                        + MIN_SPILL_FILE_BYTES + ", " + MAX_SPILL_FILE_BYTES + "]");
            }
            if (compression == null) {
                throw new IllegalArgumentException("compression = null; allowed values: NONE, LZ4");
            }
            if (directory && !sharedMemory) {
                throw new IllegalArgumentException("directory = true needs sharedMemory = true: other processes"
                        + " read the objects the directory lists in the store's memory");
            }
            String storeName = name != null ? name
                    : "store-" + ProcessHandle.current().pid() + "-" + UNNAMED.incrementAndGet();
            if (!NAME.matcher(storeName).matches()) {
                throw new IllegalArgumentException("name = '" + storeName
                        + "' is invalid; use 1 to 64 characters among letters, digits, '.', '_' and '-'");
            }
            Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
            Path memDir = memoryDirectory != null ? memoryDirectory : defaultMemoryDirectory(capacityBytes, tmp);
            Path spillDir = spillDirectory != null ? spillDirectory : tmp;
            checkDirectory("memoryDirectory", memDir);
            checkDirectory("spillDirectory", spillDir);
            Config config = new Config(storeName, capacityBytes);
            StoreDirectories dirs = StoreDirectories.open(storeName, memDir, spillDir);
            MemoryRegion region;
            try {
                region = new MemoryRegion(dirs.memoryDir(), capacityBytes, directory, sharedMemory);
            } catch (IOException | RuntimeException e) {
                dirs.close();
                throw new ObjectStoreException("store '" + storeName + "' cannot map " + capacityBytes
                        + " bytes of memory in memoryDirectory " + memDir + ": " + e.getMessage(), e);
            }
            return new ObjectStore(config, new StoreEngine(storeName, dirs, region, spillFileBytes, compression, spillGate,
                    faults));
        }

        private static Path defaultMemoryDirectory(long capacity, Path tmp) {
            return sharedMemoryDirectoryHolds(capacity) ? SHARED_MEMORY_DIRECTORY : tmp;
        }

        private static void checkDirectory(String knob, Path dir) {
            if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
                throw new IllegalArgumentException(knob + " = " + dir + " is not an existing writable directory");
            }
        }
    }
}
