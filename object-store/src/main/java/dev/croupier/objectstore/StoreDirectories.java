package dev.croupier.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
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
 * <p>Thread-safety: not thread-safe; used by the store at build and close only.
 */
final class StoreDirectories implements AutoCloseable {

    private static final String PREFIX = "croupier-store-";
    private static final String LOCK_FILE = "store.lock";

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
        FileChannel memoryChannel = null;
        FileLock memoryLock = null;
        try {
            memoryChannel = openLockChannel(memoryDir);
            memoryLock = lock(storeName, memoryDir, memoryChannel);
            FileChannel spillChannel = memoryChannel;
            FileLock spillLock = memoryLock;
            if (!memoryDir.toAbsolutePath().normalize().equals(spillDir.toAbsolutePath().normalize())) {
                spillChannel = openLockChannel(spillDir);
                try {
                    spillLock = lock(storeName, spillDir, spillChannel);
                } catch (RuntimeException e) {
                    spillChannel.close();
                    throw e;
                }
            }
            deleteContents(memoryDir);
            deleteContents(spillDir);
            return new StoreDirectories(storeName, memoryDir, spillDir, memoryChannel, memoryLock,
                    spillChannel, spillLock);
        } catch (IOException e) {
            closeQuietly(memoryChannel);
            throw new ObjectStoreException("store '" + storeName + "' cannot prepare its directories "
                    + memoryDir + " and " + spillDir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(memoryChannel);
            throw e;
        }
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
        }
        if (failure != null) {
            throw new UncheckedIOException("store '" + storeName + "' could not delete all of its files in "
                    + memoryDir + " and " + spillDir, failure);
        }
    }

    private static FileChannel openLockChannel(Path dir) throws IOException {
        Files.createDirectories(dir);
        return FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }

    private static FileLock lock(String storeName, Path dir, FileChannel channel) throws IOException {
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            throw new ObjectStoreException("store directory " + dir + " is in use by another live store named '"
                    + storeName + "'; give each store on a machine its own name");
        }
        return lock;
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
