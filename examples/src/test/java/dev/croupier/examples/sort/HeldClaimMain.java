package dev.croupier.examples.sort;

import dev.croupier.objectstore.TemporaryClaim;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A sort run that never ends, for {@link SortCommandsTest}: claims its temporaries in a folder,
 * writes one, prints its name and waits to be killed.
 */
public final class HeldClaimMain {

    private HeldClaimMain() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        TemporaryClaim claim = TemporaryClaim.take(dir, SortRun.CLAIM_PREFIX);
        Files.write(dir.resolve(claim.name() + ".tmp"), new byte[4096]);
        System.out.println(claim.name());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
