package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A pinned sealed object read in ranges where it lies: views of store memory when it is
 * resident, or bytes read from its spill file when it is spilled, without restoring it into
 * memory. Made by {@link ObjectStore#openReader}; used to send an object to another node, where
 * a restore would only evict other objects to make room for bytes that leave at once.
 *
 * <p>The pin keeps the object's memory or spill copy alive until {@link #close()}; it does not
 * keep the store open, so a read after the store closed fails with {@link StoreClosedException}.
 * An object spilled with LZ4 is restored by {@code openReader} (its chunks can only be decoded
 * from the start) and then read from memory.
 *
 * <p>Thread-safety: not thread-safe; one thread reads at a time. {@code close} is idempotent.
 */
public final class ObjectReader implements AutoCloseable {

    /** Largest range one {@link #read} returns. */
    public static final int MAX_READ_BYTES = 8 << 20;

    private final StoreEngine engine;
    private final PinnedObject pin;
    /** The object's bytes in store memory, or null when it is read from its spill copy. */
    private final MemorySegment memory;
    private final SpillRecord spill;
    /** Page-aligned buffer the spilled bytes are read into; made at the first read. */
    private ByteBuffer window;
    private boolean headerChecked;

    ObjectReader(StoreEngine engine, PinnedObject pin, MemorySegment memory, SpillRecord spill) {
        this.engine = engine;
        this.pin = pin;
        this.memory = memory;
        this.spill = spill;
    }

    /**
     * Returns the object's size in bytes.
     *
     * @return the size
     */
    public long size() {
        return pin.size();
    }

    /**
     * Whether the bytes are read from store memory (true) or from the object's spill file.
     *
     * @return true when resident
     */
    public boolean inMemory() {
        return memory != null;
    }

    /**
     * Returns bytes {@code [offset, offset + length)} of the object as a read-only view: of
     * store memory when resident, else of this reader's buffer, which the next call overwrites.
     *
     * @param offset where the range starts
     * @param length how many bytes, at most {@link #MAX_READ_BYTES}
     * @return the view
     * @throws IOException if the spill file cannot be read or its frame does not match the object
     * @throws IndexOutOfBoundsException if the range is not within the object
     */
    public MemorySegment read(long offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, size());
        if (length > MAX_READ_BYTES) {
            throw new IllegalArgumentException("read of " + length + " bytes exceeds " + MAX_READ_BYTES);
        }
        if (memory != null) {
            return memory.asSlice(offset, length);
        }
        if (window == null) {
            window = SpillFrame.pages(MAX_READ_BYTES / SpillFrame.PAGE + 2);
        }
        MemorySegment bytes = engine.readSpilled(pin.id(), spill, size(), offset, length, window, !headerChecked);
        headerChecked = true;
        return bytes.asReadOnly();
    }

    /** Unpins the object. Idempotent. */
    @Override
    public void close() {
        pin.close();
    }
}
