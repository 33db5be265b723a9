package dev.croupier.futures.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A temporary folder a process owns for its life: an embedded cluster's spill root
 * ({@code croupier-cluster-<id>}), a node's ({@code croupier-node-<id>}), the logs of the nodes
 * a driver starts ({@code croupier-node-logs-<id>}). {@link #close()} deletes it.
 *
 * <p>Crash hygiene, as the object store reclaims its own folders: a process killed with
 * {@code kill -9} deletes nothing, so beside each folder lies its claim, {@code <folder>.lock},
 * created and locked with an OS file lock before the folder exists. Whoever creates a folder of
 * the same prefix first deletes every folder whose claim no live process holds (the OS drops a
 * dead process's locks), and every empty folder of the prefix that has no claim (left by a
 * version before claims, whose owner cannot be told alive or dead by its folder; once the store
 * inside such a folder is reclaimed, it is empty). A folder is never without its claim while
 * its owner lives. Claims of this JVM are never probed: on Linux, closing any channel to a
 * locked file drops the JVM's lock on it. Thread-safe.
 */
final class ClaimedFolder implements AutoCloseable {

    private static final String LOCK = ".lock";
    /** Claims held by this JVM, which reclaiming must not open. */
    private static final Set<Path> HELD_HERE = ConcurrentHashMap.newKeySet();

    /** The folder. */
    final Path path;
    private final Path claim;
    private final FileChannel channel;
    private final FileLock lock;

    private ClaimedFolder(Path path, Path claim, FileChannel channel, FileLock lock) {
        this.path = path;
        this.claim = claim;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Deletes what dead owners left under {@code parent} with this prefix, then claims and
     * creates a new folder {@code <prefix><random id>} there.
     */
    static ClaimedFolder create(Path parent, String prefix) throws IOException {
        Files.createDirectories(parent);
        reclaimDead(parent, prefix);
        while (true) {
            Path path = parent.resolve(prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36));
            Path claim = parent.resolve(path.getFileName() + LOCK);
            FileChannel channel;
            try {
                channel = FileChannel.open(claim, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (java.nio.file.FileAlreadyExistsException taken) {
                continue;
            }
            HELD_HERE.add(claim.toAbsolutePath().normalize());
            try {
                FileLock lock = channel.lock();
                Files.createDirectory(path);
                return new ClaimedFolder(path, claim, channel, lock);
            } catch (IOException | RuntimeException e) {
                channel.close();
                Files.deleteIfExists(claim);
                HELD_HERE.remove(claim.toAbsolutePath().normalize());
                throw e;
            }
        }
    }

    /**
     * Deletes the folders of {@code prefix} under {@code parent} whose claim no live process
     * holds, and the empty ones that have none; returns how many it deleted.
     */
    static int reclaimDead(Path parent, String prefix) {
        int reclaimed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, prefix + "*")) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.endsWith(LOCK)) {
                    if (reclaimIfDead(parent.resolve(name.substring(0, name.length() - LOCK.length())), entry)) {
                        reclaimed++;
                    }
                } else if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)
                        && !Files.exists(parent.resolve(name + LOCK), LinkOption.NOFOLLOW_LINKS)) {
                    try {
                        Files.delete(entry); // fails unless empty
                        reclaimed++;
                    } catch (IOException notEmptyOrGone) {
                        // an owner from before claims may still use it
                    }
                }
            }
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            // an unreadable parent: nothing to reclaim that this process could see either
        }
        return reclaimed;
    }

    private static boolean reclaimIfDead(Path folder, Path claim) {
        if (HELD_HERE.contains(claim.toAbsolutePath().normalize())) {
            return false;
        }
        try (FileChannel channel = FileChannel.open(claim, StandardOpenOption.WRITE)) {
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
                deleteTree(folder);
            } finally {
                lock.release();
            }
            Files.deleteIfExists(claim);
            return true;
        } catch (NoSuchFileException goneMeanwhile) {
            return false;
        } catch (IOException e) {
            return false; // not ours to delete: leave it
        }
    }

    /** Deletes the folder, then drops the claim. */
    @Override
    public void close() {
        deleteTree(path);
        try {
            lock.release();
            channel.close();
            Files.deleteIfExists(claim);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot drop the claim " + claim, e);
        } finally {
            HELD_HERE.remove(claim.toAbsolutePath().normalize());
        }
    }

    /** Deletes {@code root} and everything in it, as far as it can. */
    static void deleteTree(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException ignored) {
            // best effort: whatever stays is reclaimed like a dead owner's folder
        }
    }
}
