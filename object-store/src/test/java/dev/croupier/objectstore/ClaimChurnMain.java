package dev.croupier.objectstore;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process that takes, checks and drops claims in a folder as fast as it can, while others do
 * the same there ({@link TemporaryClaimTest}): every claim it takes must keep its lock file and
 * its folder until it drops it, whatever the others' reclaims see. Prints the first claim that
 * lost either and exits 1; exits 0 after {@code args[2]} claims.
 */
public final class ClaimChurnMain {

    private ClaimChurnMain() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int claims = Integer.parseInt(args[2]);
        for (int i = 0; i < claims; i++) {
            try (TemporaryClaim claim = TemporaryClaim.folder(dir, args[1])) {
                Files.write(claim.path().resolve("data"), new byte[16]);
                TemporaryClaim.reclaimDead(dir, args[1]);
                if (!Files.exists(claim.path().resolveSibling(claim.name() + ".lock"))
                        || !Files.exists(claim.path().resolve("data"))) {
                    System.out.println("claim " + claim.name() + " lost its lock file or its folder, claim " + i);
                    System.exit(1);
                }
            }
        }
    }
}
