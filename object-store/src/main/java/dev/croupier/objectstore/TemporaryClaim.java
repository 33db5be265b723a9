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
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A process's claim on temporaries it creates in a folder (a cluster's spill root, a node's
 * logs, a sort's output before its commit), so that what a process killed with {@code kill -9}
 * leaves is deleted by the next one, as the object store reclaims its own folders.
 *
 * <p>A claim is a name, {@code <prefix><random id>}, and a file {@code <name>.lock} beside the
 * temporaries, created and locked with an OS file lock before any of them exists. The
 * temporaries are the entry called {@code <name>} and those starting with {@code <name>.}.
 * Whoever takes a claim with a prefix first deletes the temporaries of every claim of that
 * prefix that no live process holds (the OS drops a dead process's locks), and every empty
 * folder of the prefix that has no claim (left by a version before claims). Claims of this JVM
 * are never probed: on Linux, closing any channel to a locked file drops the JVM's lock on it.
 *
 * <p>Thread-safe.
 */
public final class TemporaryClaim implements AutoCloseable {

    private static final String LOCK = ".lock";
    /** Claims held by this JVM, which reclaiming must not open. */
    private static final Set<Path> HELD_HERE = ConcurrentHashMap.newKeySet();

    private final Path parent;
    private final String name;
    private final Path lockFile;
    private final FileChannel channel;
    private final FileLock lock;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private TemporaryClaim(Path parent, String name, Path lockFile, FileChannel channel, FileLock lock) {
        this.parent = parent;
        this.name = name;
        this.lockFile = lockFile;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Deletes what dead owners left in {@code parent} under claims of {@code prefix}, then takes
     * a new claim there.
     */
    public static TemporaryClaim take(Path parent, String prefix) throws IOException {
        Files.createDirectories(parent);
        reclaimDead(parent, prefix);
        while (true) {
            String name = prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
            Path lockFile = parent.resolve(name + LOCK);
            FileChannel channel;
            try {
                channel = FileChannel.open(lockFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (FileAlreadyExistsException taken) {
                continue;
            }
            Path held = lockFile.toAbsolutePath().normalize();
            HELD_HERE.add(held);
            try {
                FileLock lock = channel.lock();
                if (!lockedFileStillThere(lockFile)) {
                    channel.close();
                    HELD_HERE.remove(held);
                    continue;
                }
                return new TemporaryClaim(parent, name, lockFile, channel, lock);
            } catch (IOException | RuntimeException e) {
                channel.close();
                Files.deleteIfExists(lockFile);
                HELD_HERE.remove(held);
                throw e;
            }
        }
    }

    /** {@link #take} a claim and creates its folder, {@link #path()}. */
    public static TemporaryClaim folder(Path parent, String prefix) throws IOException {
        TemporaryClaim claim = take(parent, prefix);
        try {
            Files.createDirectory(claim.path());
            return claim;
        } catch (IOException | RuntimeException e) {
            claim.close();
            throw e;
        }
    }

    /** The name the temporaries are called by: {@code name} itself, or {@code name.}-anything. */
    public String name() {
        return name;
    }

    /** The temporary called exactly {@link #name()}, in the claim's folder. */
    public Path path() {
        return parent.resolve(name);
    }

    /**
     * Deletes the temporaries of {@code prefix}'s claims in {@code parent} that no live process
     * holds, and the empty folders of the prefix that have no claim; returns how many claims
     * and folders it reclaimed.
     */
    public static int reclaimDead(Path parent, String prefix) {
        int reclaimed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, prefix + "*")) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.endsWith(LOCK)) {
                    if (reclaimIfDead(parent, name.substring(0, name.length() - LOCK.length()), entry)) {
                        reclaimed++;
                    }
                } else if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)
                        && !Files.exists(parent.resolve(name + LOCK), LinkOption.NOFOLLOW_LINKS)) {
                    try {
                        Files.delete(entry); // fails unless empty
                        reclaimed++;
                    } catch (IOException notEmptyOrGone) {
                        // an owner from before claims, or one between its lock and its folder
                    }
                }
            }
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            // an unreadable parent: nothing to reclaim that this process could see either
        }
        return reclaimed;
    }

    private static boolean reclaimIfDead(Path parent, String name, Path lockFile) {
        return !HELD_HERE.contains(lockFile.toAbsolutePath().normalize())
                && reclaimIfUnlocked(lockFile, () -> deleteTemporaries(parent, name));
    }

    /**
     * Whether the lock file an owner just created and locked is still there. Another process's
     * reclaim ({@link #reclaimIfUnlocked}) may lock a fresh file between its creation and its
     * owner's lock, take it for a dead owner's and delete it before releasing: the owner's lock
     * is then on a file no longer there, and the owner must start over. One check for claims and
     * store directories alike.
     */
    static boolean lockedFileStillThere(Path lockFile) {
        return Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS);
    }

    /** What a reclaim deletes once it holds a dead owner's lock. */
    @FunctionalInterface
    interface Leftovers {
        void delete() throws IOException;
    }

    /**
     * The one probe of a lock file whose owner may be dead (a claim here, a store directory in
     * {@link StoreDirectories}): if no process holds its lock (the OS drops a dead process's),
     * deletes {@code leftovers}, then the lock file, both while holding the lock. An owner that
     * created the file but locks it only after this probe's release so finds it gone and starts
     * over; one that locked it first makes the probe fail. The probe goes on only if the path
     * names the same file before it is opened and once it is locked: an owner that gave up a
     * file a probe had opened makes a new one under the same name (a store directory's is
     * fixed), and a lock on the old one must not delete the new. Returns whether it
     * reclaimed: false when the owner lives, the file is gone or replaced, this JVM holds it, or
     * it cannot be opened.
     */
    static boolean reclaimIfUnlocked(Path lockFile, Leftovers leftovers) {
        try {
            Object opened = fileKey(lockFile);
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
                return reclaimIfUnlocked(lockFile, opened, channel, leftovers);
            }
        } catch (IOException e) {
            return false; // gone meanwhile, or not ours to delete: leave it
        }
    }

    /**
     * {@link #reclaimIfUnlocked(Path, Leftovers)} once {@code lockFile}, which was the file
     * {@code opened} names, is open as {@code channel}.
     */
    static boolean reclaimIfUnlocked(Path lockFile, Object opened, FileChannel channel, Leftovers leftovers)
            throws IOException {
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException heldHere) {
            return false;
        }
        if (lock == null) {
            return false; // its owner is alive
        }
        try {
            if (!java.util.Objects.equals(opened, fileKey(lockFile))) {
                return false; // replaced since it was opened: the new file is not this lock's
            }
            leftovers.delete();
            Files.deleteIfExists(lockFile);
        } finally {
            lock.release();
        }
        return true;
    }

    /** The identity of the file at {@code path} (its device and inode here), or null where the file system has none. */
    private static Object fileKey(Path path) throws IOException {
        return Files.readAttributes(path, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                .fileKey();
    }

    /** Deletes the claim's temporaries, then drops the claim; once. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        deleteTemporaries(parent, name);
        try {
            lock.release();
            channel.close();
            Files.deleteIfExists(lockFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot drop the claim " + lockFile, e);
        } finally {
            HELD_HERE.remove(lockFile.toAbsolutePath().normalize());
        }
    }

    private static void deleteTemporaries(Path parent, String name) {
        deleteTree(parent.resolve(name));
        try (DirectoryStream<Path> named = Files.newDirectoryStream(parent, name + ".*")) {
            for (Path p : named) {
                if (!p.getFileName().toString().equals(name + LOCK)) {
                    deleteTree(p);
                }
            }
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            // best effort: whatever stays is reclaimed like a dead owner's
        }
    }

    /** Deletes {@code root} and everything in it, as far as it can. */
    private static void deleteTree(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException ignored) {
            // best effort: whatever stays is reclaimed like a dead owner's
        }
    }
}
