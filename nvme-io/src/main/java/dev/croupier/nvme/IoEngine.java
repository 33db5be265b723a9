package dev.croupier.nvme;

/**
 * How a {@link RowSampler} keeps many reads in flight, as fio's {@code ioengine} names it.
 * Thread-safety: immutable enum.
 */
public enum IoEngine {
    /** {@link #AIO} where it works (Linux on x86-64 or aarch64, with {@code O_DIRECT}), else {@link #THREADS}. */
    AUTO,
    /**
     * Linux native AIO ({@code io_submit}/{@code io_getevents}): one loop thread per core (at most
     * one per 4 reads) keeps its share of {@code readerThreads} reads in flight and scatters each
     * chunk's rows as it completes.
     * Needs {@code O_DIRECT}; asking for it where it cannot work fails the build of the sampler.
     */
    AIO,
    /** {@code readerThreads} threads, each blocked in one positional read at a time. */
    THREADS
}
