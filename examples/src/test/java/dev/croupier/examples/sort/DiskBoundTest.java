package dev.croupier.examples.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The sort's disk bound: which reads go at the probe's rate and which at the input's own. */
class DiskBoundTest {

    /** Writes 1 GB/s, reads what it has just written at 4 GB/s. */
    private static final DiskBound DISK = new DiskBound(1e9, 4e9);
    private static final long BYTES = 4_000_000_000L;

    @Test
    void inMemoryTheSortReadsItsInputOnceAndWritesItsOutputOnce() {
        assertEquals(4 + 1, DISK.sortSeconds(BYTES, 0), 1e-9);
        assertEquals(4 + 4, DISK.sortSeconds(BYTES, 0, 1e9), 1e-9);
    }

    @Test
    void theInputIsReadAtItsOwnRateFasterThanTheProbesToo() {
        // a cache that served the input served the sort as well: the bound gives it no less
        assertEquals(4 + 0.5, DISK.sortSeconds(BYTES, 0, 8e9), 1e-9);
        assertEquals(2 * 4 + 0.5 + 1, DISK.sortSeconds(BYTES, BYTES, 8e9), 1e-9);
    }

    @Test
    void outOfCoreTheSpillIsWrittenAndReadBackAtTheProbesRateAndOnlyTheInputAtItsOwn() {
        assertEquals(2 * (4 + 1), DISK.sortSeconds(BYTES, BYTES), 1e-9);
        assertEquals(2 * 4 + 4 + 1, DISK.sortSeconds(BYTES, BYTES, 1e9), 1e-9);
        // stores that hold three quarters of the data: a quarter is written (with the output) and read back
        assertEquals((4 + 1) + 4 + 0.25, DISK.sortSeconds(BYTES, BYTES / 4, 1e9), 1e-9);
    }
}
