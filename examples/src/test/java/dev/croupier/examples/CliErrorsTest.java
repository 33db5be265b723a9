package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user sees when a command fails: one line that names the cause (file, offset, field,
 * node), a non-zero exit, and no stack trace unless {@code --verbose} asks for it.
 */
@Timeout(120)
class CliErrorsTest {

    @TempDir
    Path dir;

    private record Failed(int code, String err) {
        void isOneLineNaming(String... words) {
            assertTrue(code != 0, "a failure exits non-zero");
            assertEquals(1, err.strip().lines().count(), "one line:\n" + err);
            assertFalse(err.contains("\tat "), "no stack trace:\n" + err);
            for (String w : words) {
                assertTrue(err.contains(w), "names " + w + ": " + err);
            }
        }
    }

    private static Failed run(String... args) {
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            code = CroupierCli.execute(args);
        } finally {
            System.setErr(old);
        }
        return new Failed(code, err.toString(StandardCharsets.UTF_8));
    }

    /** The lines of a run's error output that are not the progress report a sort prints as it goes. */
    private static Failed errorsOnly(Failed f) {
        String errors = f.err().lines().filter(l -> l.startsWith("croupier") || l.startsWith("\tat ") || l.startsWith("Caused"))
                .reduce("", (a, b) -> a + b + "\n");
        return new Failed(f.code(), errors);
    }

    @Test
    void aSortOfAFileThatIsNotWholeRecordsNamesTheFileAndOffset() throws Exception {
        Path bad = Files.write(dir.resolve("bad.dat"), new byte[150]);
        Failed f = errorsOnly(run("sort", bad.toString(), dir.resolve("out").toString(), "--nodes", "1"));
        f.isOneLineNaming("croupier sort:", bad.toString(), "offset 100");
        assertFalse(Files.exists(dir.resolve("out")), "no output");
    }

    @Test
    void aMissingInputIsNamed() {
        Path missing = dir.resolve("missing.dat");
        run("sort", missing.toString(), dir.resolve("out").toString()).isOneLineNaming(missing.toString());
        run("reshard", dir.resolve("spec.json").toString()).isOneLineNaming("spec.json");
    }

    /** A file where a folder must be: named, and said so (the file system gives no reason of its own). */
    @Test
    void aFileGivenAsAFolderIsNamed() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        Failed f = errorsOnly(run("sort-benchmark", "--size", "1m", "--spill-dir", file.toString()));
        f.isOneLineNaming(file + " is not a folder");
        assertFalse(f.err().contains("null"), f.err());
    }

    @Test
    void aBadSpecFieldIsNamed() throws Exception {
        Path spec = Files.writeString(dir.resolve("spec.json"), "{\"input\": 7, \"output_shard_size\": \"huge\"}");
        Failed f = run("reshard", spec.toString());
        assertTrue(f.code() != 0);
        f.isOneLineNaming("croupier reshard:");
    }

    @Test
    void anUnreachableNodeIsNamed() throws Exception {
        Path in = Files.write(dir.resolve("in"), new byte[1000]);
        run("sort", in.toString(), dir.resolve("out").toString(), "--cluster", "127.0.0.1:1")
                .isOneLineNaming("127.0.0.1:1");
        run("status", "--cluster", "127.0.0.1:1").isOneLineNaming("127.0.0.1:1");
    }

    @Test
    void aBadFlagIsNamedWithUsageExitCode() {
        Failed f = run("sort", "in", "out", "--nodes", "zero");
        assertEquals(2, f.code());
        f.isOneLineNaming("--nodes");
    }

    /** Every command that takes a strategy reads it one way: its flag and the names it takes are named. */
    @Test
    void aBadStrategyIsNamedTheSameWayByEveryCommand() {
        for (String[] args : new String[][] {{"sort", "in", "out", "--strategy", "fast"},
                {"sort-benchmark", "--strategy", "fast"}, {"loader", "--strategy", "fast"},
                {"aggregate", "--batch-strategy", "fast"}}) {
            Failed f = run(args);
            assertEquals(2, f.code(), String.join(" ", args));
            f.isOneLineNaming(args[args.length - 2] + " = 'fast' is not one of simple, riffle, magnet, push, auto");
        }
    }

    @Test
    void verbosePrintsTheStackTraceToo() throws Exception {
        Path bad = Files.write(dir.resolve("bad.dat"), new byte[150]);
        Failed f = errorsOnly(run("sort", bad.toString(), dir.resolve("out").toString(), "--nodes", "1", "--verbose"));
        assertTrue(f.code() != 0);
        assertTrue(f.err().startsWith("croupier sort: ") && f.err().contains(bad.toString()), f.err());
        assertTrue(f.err().contains("\tat "), "the trace follows with --verbose:\n" + f.err());
    }

    @Test
    void aDefectIsCalledOneAndPointsToVerbose() {
        String line = CroupierCli.oneLine(new IllegalStateException("broken\ninvariant"));
        assertTrue(line.startsWith("internal error: java.lang.IllegalStateException: broken invariant"), line);
        assertTrue(line.contains("--verbose"), line);
    }
}
