package dev.croupier.nvme;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

import java.util.BitSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChunkPermutationProperties {

    @Property(tries = 200)
    void isABijectionOnItsDomain(@ForAll @LongRange(min = 1, max = 20_000) long n, @ForAll long key) {
        ChunkPermutation p = new ChunkPermutation(n, key);
        BitSet hit = new BitSet((int) n);
        for (long i = 0; i < n; i++) {
            long image = p.apply(i);
            assertTrue(image >= 0 && image < n, "image " + image + " outside [0, " + n + ")");
            assertFalse(hit.get((int) image), "image " + image + " twice");
            hit.set((int) image);
        }
        assertEquals(n, hit.cardinality());
    }

    @Property(tries = 50)
    void workspaceStrideIsCoprimeSoTheScatterIsABijection(@ForAll @LongRange(min = 1, max = 50_000) long rows) {
        int n = (int) rows;
        long stride = Workspace.stride(n);
        BitSet hit = new BitSet(n);
        long slot = 0;
        for (int i = 0; i < n; i++) {
            assertFalse(hit.get((int) slot));
            hit.set((int) slot);
            slot = (slot + stride) % n;
        }
        assertEquals(n, hit.cardinality());
    }
}
