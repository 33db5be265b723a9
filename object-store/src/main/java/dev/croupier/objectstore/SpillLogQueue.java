package dev.croupier.objectstore;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.function.Consumer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The Chronicle Queue that holds {@link SpillLog}'s records, one document per record.
 *
 * <p>Design note: this is the only class of the store that names a Chronicle type, so a JVM
 * where Chronicle cannot work (no {@code --add-opens}/{@code --add-exports}, or no Chronicle on
 * the class path) never loads Chronicle at all: {@link SpillLog} decides whether to come here
 * and falls back to its plain index file otherwise. The records' bytes are {@link SpillLog}'s;
 * this class only carries them.
 *
 * <p>Thread-safety: not thread-safe; its {@link SpillLog} is used under the store's lock (the
 * appender's own single-thread check is switched off for that reason).
 */
final class SpillLogQueue implements AutoCloseable {

    private static final long BLOCK_BYTES = 1L << 20;

    private final ChronicleQueue queue;
    private final ExcerptAppender appender;

    /**
     * Creates (or opens) the queue in {@code dir} for appending.
     *
     * @param dir the queue's directory
     */
    SpillLogQueue(Path dir) {
        ChronicleQueue q = open(dir, false);
        try {
            appender = q.createAppender();
            appender.singleThreadedCheckDisabled(true);
        } catch (Throwable t) {
            q.close();
            throw t;
        }
        queue = q;
    }

    private static ChronicleQueue open(Path dir, boolean readOnly) {
        return SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FAST_DAILY).blockSize(BLOCK_BYTES)
                .readOnly(readOnly).build();
    }

    /** Appends one record as one document. */
    void append(byte[] record) {
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().write(record);
        }
    }

    /**
     * Hands every record of the queue in {@code dir} to {@code sink}, oldest first, as a
     * little-endian buffer of the document's bytes.
     */
    static void readAll(Path dir, Consumer<ByteBuffer> sink) {
        try (ChronicleQueue q = open(dir, true); ExcerptTailer tailer = q.createTailer()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    byte[] record = new byte[(int) b.readRemaining()];
                    b.read(record);
                    sink.accept(ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN));
                }
            }
        }
    }

    @Override
    public void close() {
        appender.close();
        queue.close();
        // Chronicle unmaps closed files on a background thread; wait for it, so the store's
        // files are really gone (and their file system unmountable) once the store is closed
        BackgroundResourceReleaser.releasePendingResources();
    }
}
