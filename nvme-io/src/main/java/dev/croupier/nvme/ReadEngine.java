package dev.croupier.nvme;

/**
 * What reads the chunks of published fills: {@link ChunkReaders} (threads blocked in
 * {@code pread}) or {@link AioReaders} (Linux native AIO from one thread). The consumer thread
 * calls {@link #submit} and {@link #close}; the counters may be read from any thread.
 */
interface ReadEngine extends AutoCloseable {

    /** Publishes a planned fill; its chunks become claimable at once. */
    void submit(Workspace.Fill fill);

    /** Bytes read so far, alignment padding included. */
    long bytesRead();

    /** Reads completed so far. */
    long reads();

    /** Which engine this is. */
    IoEngine engine();

    /** Stops reading after the reads in flight and waits for them. */
    @Override
    void close();
}
