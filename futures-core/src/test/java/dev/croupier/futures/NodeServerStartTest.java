package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node that cannot start says why in one line, naming the address or the folder. */
class NodeServerStartTest {

    @TempDir
    Path dir;

    /** The port's owner is named by the system's reason, not only by the transport's "failed to bind". */
    @Test
    void aPortInUseIsNamedWithTheReason() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CroupierException e = assertThrows(CroupierException.class, () -> NodeServer.builder()
                    .port(taken.getLocalPort()).objectStoreBytes(8L << 20).spillDirectory(dir).start());
            assertEquals(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().startsWith("cannot serve on 127.0.0.1:" + taken.getLocalPort() + ": "),
                    e.getMessage());
            assertTrue(e.getMessage().contains("already in use"), e.getMessage());
        }
    }

    /** A memory folder that is not a writable folder is the user's setting: bad input, naming it. */
    @Test
    void aMemoryFolderThatIsAFileIsBadInputNamingIt() throws IOException {
        Path aFile = Files.createFile(dir.resolve("not-a-folder"));
        CroupierException e = assertThrows(CroupierException.class, () -> NodeServer.builder()
                .objectStoreBytes(8L << 20).spillDirectory(dir).memoryDirectory(aFile).start());
        assertEquals(ErrorCode.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains(aFile.toString()), e.getMessage());
    }
}
