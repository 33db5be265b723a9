package dev.croupier.objectstore;

import java.nio.file.Path;

/**
 * Writing to disk failed (typically: disk full) while spilling objects or allocating a fallback
 * file. No object is lost: objects that could not be spilled stay in memory.
 *
 * <p>Thread-safety: immutable after construction.
 */
public class SpillFailedException extends ObjectStoreException {

    private final transient Path directory;
    private final long bytesWanted;

    /**
     * Creates the error.
     *
     * @param store the store's name
     * @param directory the directory that could not take the bytes
     * @param bytesWanted how many bytes the store tried to write there
     * @param cause the I/O failure
     */
    public SpillFailedException(String store, Path directory, long bytesWanted, Throwable cause) {
        super("store '" + store + "' could not write " + bytesWanted + " bytes to " + directory
                + " (" + (cause == null ? "unknown cause" : cause.getMessage())
                + "); objects that were being spilled stay in memory", cause);
        this.directory = directory;
        this.bytesWanted = bytesWanted;
    }

    /**
     * Returns the directory that could not take the bytes.
     *
     * @return the spill or fallback directory
     */
    public Path directory() {
        return directory;
    }

    /**
     * Returns the number of bytes the store tried to write.
     *
     * @return bytes wanted
     */
    public long bytesWanted() {
        return bytesWanted;
    }
}
