package dev.croupier.objectstore;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process that claims temporaries in a folder, makes them, prints the claim's name and waits
 * to be killed: {@link TemporaryClaimTest}'s dead or live owner.
 */
public final class ClaimHolderMain {

    private ClaimHolderMain() {}

    public static void main(String[] args) throws Exception {
        TemporaryClaim claim = TemporaryClaim.folder(Path.of(args[0]), args[1]);
        Files.write(claim.path().resolve("data"), new byte[4096]);
        Files.write(claim.path().resolveSibling(claim.name() + ".tmp"), new byte[4096]);
        System.out.println(claim.name());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
