package dev.croupier.examples.sort;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/**
 * A sort run's claim on its temporary output in a folder: a {@code .croupier-sort-<id>.lock}
 * file locked for the run's life, beside the temporaries it names ({@code .croupier-sort-<id>}
 * and anything starting with that). A run killed with {@code kill -9} leaves its temporaries
 * behind, and the kernel drops its lock; the next run in the same folder takes every claim it
 * can lock and deletes what the claim names. The lock is on a file nothing else opens: on
 * Linux closing any channel to a locked file drops the process's lock, and reducers open and
 * close the temporary output itself. Not thread-safe; one per run.
 */
final class RunClaim implements AutoCloseable {

    private static final String PREFIX = ".croupier-sort-";
    private static final String LOCK = ".lock";

    private final Path lockFile;
    private final FileChannel channel;
    private final FileLock lock;
    /** The name every temporary of this run starts with, in its folder. */
    final String name;

    private RunClaim(Path lockFile, FileChannel channel, FileLock lock, String name) {
        this.lockFile = lockFile;
        this.channel = channel;
        this.lock = lock;
        this.name = name;
    }

    /** Reclaims what dead runs left in {@code dir}, then claims a name for this run's temporaries. */
    static RunClaim take(Path dir) throws IOException {
        reclaimDead(dir);
        String name = PREFIX + UUID.randomUUID();
        Path lockFile = dir.resolve(name + LOCK);
        FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        return new RunClaim(lockFile, channel, channel.lock(), name);
    }

    /** Deletes the temporaries of every run in {@code dir} whose claim no live process holds. */
    static int reclaimDead(Path dir) throws IOException {
        int reclaimed = 0;
        try (DirectoryStream<Path> claims = Files.newDirectoryStream(dir, PREFIX + "*" + LOCK)) {
            for (Path claim : claims) {
                if (reclaimIfDead(dir, claim)) {
                    reclaimed++;
                }
            }
        }
        return reclaimed;
    }

    private static boolean reclaimIfDead(Path dir, Path claim) throws IOException {
        String name = claim.getFileName().toString();
        String run = name.substring(0, name.length() - LOCK.length());
        try (FileChannel channel = FileChannel.open(claim, StandardOpenOption.WRITE)) {
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException thisProcess) {
                return false;
            }
            if (lock == null) {
                return false; // its run is alive
            }
            try (DirectoryStream<Path> left = Files.newDirectoryStream(dir, run + "*")) {
                for (Path p : left) {
                    if (!p.equals(claim)) {
                        SortCommands.deleteTree(p);
                    }
                }
            }
            lock.release();
        } catch (java.nio.file.NoSuchFileException goneMeanwhile) {
            return false;
        }
        Files.deleteIfExists(claim);
        return true;
    }

    @Override
    public void close() throws IOException {
        lock.release();
        channel.close();
        Files.deleteIfExists(lockFile);
    }
}
