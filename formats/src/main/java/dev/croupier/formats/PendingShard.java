package dev.croupier.formats;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A shard fully written and fsynced under a temporary name in its target's directory, waiting
 * for the caller to decide: {@link #commit()} renames it atomically onto the target, and
 * {@link #discard()} deletes it. A reshard job holds every output as a pending shard and
 * commits them only after the whole job has succeeded.
 *
 * <p>Thread-safety: not thread-safe; commit or discard it from one thread.
 */
public final class PendingShard {
    private final Path temporary;
    private final Path target;
    private final long size;
    private boolean done;

    /**
     * @param temporary the fsynced temporary file, in the same directory as {@code target}
     * @param target the final name
     * @param size the size of the temporary file in bytes
     */
    public PendingShard(Path temporary, Path target, long size) {
        this.temporary = temporary;
        this.target = target;
        this.size = size;
    }

    /** @return the temporary file */
    public Path temporary() {
        return temporary;
    }

    /** @return the final name */
    public Path target() {
        return target;
    }

    /** @return the shard's size in bytes */
    public long size() {
        return size;
    }

    /**
     * Renames the temporary file onto the target atomically (replacing an existing target)
     * and fsyncs the directory so the rename survives a crash.
     *
     * @return the target path
     * @throws IOException when the rename fails; the temporary file is then left for {@link #discard()}
     */
    public Path commit() throws IOException {
        if (done) {
            throw new IllegalStateException("shard " + target + " was already committed or discarded");
        }
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot rename " + temporary + " onto " + target + " atomically", e);
        }
        done = true;
        syncDirectory(target.toAbsolutePath().getParent());
        return target;
    }

    /**
     * Deletes the temporary file; does nothing after a commit.
     *
     * @throws IOException when the delete fails
     */
    public void discard() throws IOException {
        if (!done) {
            done = true;
            Files.deleteIfExists(temporary);
        }
    }

    /** Directory fsync is best effort: some file systems refuse to open a directory. */
    static void syncDirectory(Path dir) {
        if (dir == null) {
            return;
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException ignored) {
            // Not every platform can open a directory for fsync; the rename itself is still atomic.
        }
    }
}
