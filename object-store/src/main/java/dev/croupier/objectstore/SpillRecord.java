package dev.croupier.objectstore;

/**
 * Where a spilled object's stored bytes are: one frame in a fused spill file.
 *
 * <p>Thread-safety: immutable value.
 *
 * @param file the spill file
 * @param frameOffset offset of the object's frame header in the file
 * @param storedLength payload bytes on disk (after compression)
 * @param compression how the payload is encoded
 */
record SpillRecord(SpillFile file, long frameOffset, long storedLength, Compression compression) {

    /** Offset of the first payload byte. */
    long payloadOffset() {
        return frameOffset + SpillFrame.FRAME_HEADER_BYTES;
    }

    /** Offset just past the frame (its padding included). */
    long frameEnd() {
        return frameOffset + SpillFrame.frameBytes(storedLength);
    }
}
