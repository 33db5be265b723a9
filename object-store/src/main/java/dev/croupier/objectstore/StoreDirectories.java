package dev.croupier.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The two directories a store owns: one under the memory directory (the mapped region file) and
 * one under the spill directory (spill files, the spill log, fallback files).
 *
 * <p>Design note: each directory is named {@code croupier-store-<name>} and holds a lock file
 * locked with an OS file lock for the store's life. At start the store takes the lock and
 * deletes everything else in the directory, so it never reads a previous run's leftovers, and a
 * second live store with the same name fails fast instead of destroying the first one's files.
 * At close everything is deleted, the lock file last. Both directories may be the same path.
 *
 * <p>Crash hygiene: a process killed with {@code kill -9} deletes nothing, and its shared
 * memory stays allocated until reboot. So every store, when it opens, first reclaims the
 * store directories beside its memory directory whose lock no live process holds (the OS
 * drops a dead process's file locks), with the spill directory each names in its
 * {@value #SPILL_POINTER} file. Stores of this JVM are never probed: on Linux, closing any
 * channel to a locked file releases the JVM's lock on it.
 *
 * <p>Thread-safety: not thread-safe; used by the store at build and close only.
 */
final class StoreDirectories implements AutoCloseable {

    private static final String PREFIX = "croupier-store-";
    private static final String LOCK_FILE = "store.lock";
    /** A file in the memory directory naming the store's spill directory, for reclaiming. */
    static final String SPILL_POINTER = "spill.dir";
    /** Memory directories of this JVM's open stores, which reclaiming must not touch. */
    private static final java.util.Set<Path> OPEN_HERE = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final String storeName;
    private final Path memoryDir;
    private final Path spillDir;
    private final FileChannel memoryLockChannel;
    private final FileLock memoryLock;
    private final FileChannel spillLockChannel;
    private final FileLock spillLock;

    private StoreDirectories(String storeName, Path memoryDir, Path spillDir,
                             FileChannel memoryLockChannel, FileLock memoryLock,
                             FileChannel spillLockChannel, FileLock spillLock) {
        this.storeName = storeName;
        this.memoryDir = memoryDir;
        this.spillDir = spillDir;
        this.memoryLockChannel = memoryLockChannel;
        this.memoryLock = memoryLock;
        this.spillLockChannel = spillLockChannel;
        this.spillLock = spillLock;
    }

    /**
     * Creates, locks and empties the store's directories.
     *
     * @param storeName the store's name
     * @param memoryParent the configured memory directory
     * @param spillParent the configured spill directory
     * @return the locked, empty directories
     */
    static StoreDirectories open(String storeName, Path memoryParent, Path spillParent) {
        Path memoryDir = memoryParent.resolve(PREFIX + storeName);
        Path spillDir = spillParent.resolve(PREFIX + storeName);
        reclaimDead(memoryParent);
        FileChannel memoryChannel = null;
        FileLock memoryLock = null;
        try {
            if (!OPEN_HERE.add(memoryDir.toAbsolutePath().normalize())) {
                throw new ObjectStoreException("store directory " + memoryDir + " is in use by another live store named '"
                        + storeName + "'; give each store on a machine its own name");
            }
            Locked memory = lock(storeName, memoryDir);
            memoryChannel = memory.channel();
            memoryLock = memory.lock();
            FileChannel spillChannel = memoryChannel;
            FileLock spillLock = memoryLock;
            if (!memoryDir.toAbsolutePath().normalize().equals(spillDir.toAbsolutePath().normalize())) {
                Locked spill = lock(storeName, spillDir);
                spillChannel = spill.channel();
                spillLock = spill.lock();
            }
            deleteContents(memoryDir);
            deleteContents(spillDir);
            Files.writeString(memoryDir.resolve(SPILL_POINTER), spillDir.toAbsolutePath().toString());
            return new StoreDirectories(storeName, memoryDir, spillDir, memoryChannel, memoryLock,
                    spillChannel, spillLock);
        } catch (IOException e) {
            closeQuietly(memoryChannel);
            OPEN_HERE.remove(memoryDir.toAbsolutePath().normalize());
            throw new ObjectStoreException("store '" + storeName + "' cannot prepare its directories "
                    + memoryDir + " and " + spillDir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(memoryChannel);
            if (memoryLock != null || !(e instanceof ObjectStoreException)) {
                OPEN_HERE.remove(memoryDir.toAbsolutePath().normalize());
            }
            throw e;
        }
    }

    /**
     * Deletes the store directories under {@code memoryParent}, and the spill directories they
     * name, whose lock no live process holds; returns how many stores it reclaimed. A directory
     * without a lock file (a store being created right now) is left alone.
     */
    static int reclaimDead(Path memoryParent) {
        int reclaimed = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(memoryParent, PREFIX + "*")) {
            for (Path dir : dirs) {
                if (!OPEN_HERE.contains(dir.toAbsolutePath().normalize()) && reclaimIfDead(dir)) {
                    reclaimed++;
                }
            }
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            // an unreadable parent: nothing to reclaim that this store could see either
        }
        return reclaimed;
    }

    private static boolean reclaimIfDead(Path memoryDir) {
        Path lockFile = memoryDir.resolve(LOCK_FILE);
        if (!Files.isRegularFile(lockFile, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                || !TemporaryClaim.reclaimIfUnlocked(lockFile, () -> {
                    Path pointer = memoryDir.resolve(SPILL_POINTER);
                    if (Files.isRegularFile(pointer)) {
                        Path spillDir = Path.of(Files.readString(pointer).trim());
                        if (!spillDir.equals(memoryDir) && spillDir.getFileName().toString().startsWith(PREFIX)) {
                            reclaimIfDead(spillDir);
                        }
                    }
                    deleteContents(memoryDir);
                })) {
            return false;
        }
        try {
            Files.deleteIfExists(memoryDir);
        } catch (IOException notEmpty) {
            // a new store of the same name made its lock file there meanwhile
        }
        return true;
    }

    /** Returns the directory holding the mapped memory region file. */
    Path memoryDir() {
        return memoryDir;
    }

    /** Returns the directory holding spill files, the spill log and fallback files. */
    Path spillDir() {
        return spillDir;
    }

    /** Deletes every file of the store and both directories, then releases the locks. */
    @Override
    public void close() {
        IOException failure = null;
        for (Path dir : new Path[] {memoryDir, spillDir}) {
            try {
                deleteContents(dir);
            } catch (IOException e) {
                failure = e;
            }
        }
        try {
            if (spillLock != memoryLock) {
                spillLock.release();
                spillLockChannel.close();
            }
            memoryLock.release();
            memoryLockChannel.close();
            Files.deleteIfExists(spillDir.resolve(LOCK_FILE));
            Files.deleteIfExists(memoryDir.resolve(LOCK_FILE));
            Files.deleteIfExists(spillDir);
            Files.deleteIfExists(memoryDir);
        } catch (IOException e) {
            failure = e;
        } finally {
            OPEN_HERE.remove(memoryDir.toAbsolutePath().normalize());
        }
        if (failure != null) {
            throw new UncheckedIOException("store '" + storeName + "' could not delete all of its files in "
                    + memoryDir + " and " + spillDir, failure);
        }
    }

    private static void sleepBriefly() throws IOException {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for a store directory's lock");
        }
    }

    /** A directory's lock file, open and locked. */
    private record Locked(FileChannel channel, FileLock lock) {}

    /** How long a store waits for a lock that another process's reclaim may be probing. */
    private static final long PROBE_WAIT_MILLIS = 2_000;

    /**
     * Creates {@code dir} and its lock file and locks it. Another process's reclaim
     * ({@link TemporaryClaim#reclaimIfUnlocked}) may lock the file between its creation and this
     * lock, to probe whether its store is alive: this lock then waits (a probe holds it for
     * milliseconds, a live store for its life), and if the probe took it for a dead store's and
     * deleted it, the lock is on a file no longer there and the directory is made again.
     */
    private static Locked lock(String storeName, Path dir) throws IOException {
        long deadline = System.nanoTime() + PROBE_WAIT_MILLIS * 1_000_000L;
        while (true) {
            try {
                Files.createDirectories(dir);
            } catch (FileAlreadyExistsException raced) {
                // The JDK found the name taken, then no directory there: a reclaim deleted the
                // directory between its two looks. Only something other than a directory in
                // the way is an error.
                if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    throw raced;
                }
                continue;
            }
            FileChannel channel;
            try {
                channel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            } catch (java.nio.file.NoSuchFileException reclaimedMeanwhile) {
                continue; // a reclaim deleted the empty directory just made: make it again
            }
            FileLock lock;
            boolean heldHere = false;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
                heldHere = true;
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            if (lock == null) {
                channel.close();
                if (!heldHere && System.nanoTime() < deadline) {
                    sleepBriefly();
                    continue;
                }
                throw new ObjectStoreException("store directory " + dir + " is in use by another live store named '"
                        + storeName + "'; give each store on a machine its own name");
            }
            if (TemporaryClaim.lockedFileStillThere(dir.resolve(LOCK_FILE))) {
                return new Locked(channel, lock);
            }
            channel.close();
        }
    }

    /** Deletes everything in {@code dir} except the lock file, recursively. */
    private static void deleteContents(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (!entry.getFileName().toString().equals(LOCK_FILE)) {
                    deleteRecursively(entry);
                }
            }
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (Files.isDirectory(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(path)) {
                for (Path entry : entries) {
                    deleteRecursively(entry);
                }
            }
        }
        Files.deleteIfExists(path);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // already failing; the original error is the one to report
            }
        }
    }
}
