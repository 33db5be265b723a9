package dev.croupier.examples;

import dev.croupier.futures.CroupierException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Entry point of {@code bin/croupier}: dispatches a subcommand to its program.
 *
 * <p>Every subcommand is a {@link Command}; this class only keeps the table and prints help.
 * {@code croupier test} never reaches the JVM: the launcher script runs Maven for it.
 */
public final class CroupierCli {

    /** One subcommand: a name, a one-line summary, and a program that returns an exit code. */
    public interface Command {
        /** Runs with the arguments after the subcommand's name; returns the process exit code. */
        int run(String[] args) throws Exception;
    }

    private record Entry(String summary, Command command) {}

    static final Map<String, Entry> COMMANDS = new LinkedHashMap<>();

    static {
        COMMANDS.put("help", new Entry("list the subcommands", args -> help(System.out)));
        COMMANDS.put("version", new Entry("print the version of Croupier and of the JVM", args -> version()));
        COMMANDS.put("sort-benchmark", new Entry("generate, sort, validate and report a Sort Benchmark run (the main job)",
                new dev.croupier.examples.sort.SortCommands.SortBenchmark()));
        COMMANDS.put("sort", new Entry("sort a file of 100-byte records: sort IN OUT",
                new dev.croupier.examples.sort.SortCommands.Sort()));
        COMMANDS.put("gensort", new Entry("write N Sort Benchmark records: gensort N FILE [--seed S]",
                new dev.croupier.examples.sort.SortCommands.GenSort()));
        COMMANDS.put("valsort", new Entry("check a sorted file and print its checksum: valsort FILE",
                new dev.croupier.examples.sort.SortCommands.ValSort()));
        COMMANDS.put("demo", new Entry("run thousands of tasks and no-op tasks; prints tasks/s and the cluster's stats",
                new DemoCommand()));
        COMMANDS.put("test", new Entry("run the whole test suite (handled by bin/croupier with Maven)",
                args -> launcherOnly("test")));
        COMMANDS.put("bench", new Entry("run JMH benchmarks; options go to JMH, e.g. 'bench TaskThroughput'",
                args -> launcherOnly("bench")));
        COMMANDS.put("sample", new Entry("sample random rows of a file with direct I/O; prints samples/s, GiB/s, page-cache growth", new SampleCommand()));
        COMMANDS.put("reshard", new Entry("reshard, sort or shuffle dataset shards as dSort does: reshard SPEC.json", new dev.croupier.examples.reshard.ReshardCommand()));
        COMMANDS.put("loader", new Entry("ML-style loader: reshuffle a dataset every epoch, consume partitions as they complete", new dev.croupier.examples.loader.LoaderCommand()));
        COMMANDS.put("aggregate", new Entry("online aggregation: a streaming group-by printing a partial answer per round", new dev.croupier.examples.aggregate.AggregateCommand()));
        COMMANDS.put("node", new Entry("run a node process that drivers use with --cluster HOST:PORT: node --port P",
                new NodeCommand()));
        COMMANDS.put("status", new Entry("show each node's store, tasks and driver sessions: status --cluster ADDRS",
                new StatusCommand()));
        COMMANDS.put("dashboard", new Entry("a live page of the nodes and their tasks: dashboard --cluster ADDRS --port P",
                new DashboardCommand()));
    }

    private CroupierCli() {}

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /**
     * Runs the subcommand {@code args[0]} names with the rest, and returns the exit code: 0 when
     * it succeeds, 2 for bad usage, 1 when the job fails. A failure prints one line, the
     * subcommand and the cause in its own words (the file, field, offset or node it names); the
     * stack trace only with {@code --verbose}, anywhere among the arguments. An error that is
     * not the project's own (a defect) says so and points to {@code --verbose}.
     */
    static int execute(String[] args) {
        boolean verbose = Arrays.asList(args).contains(VERBOSE);
        String[] given = Arrays.stream(args).filter(a -> !a.equals(VERBOSE)).toArray(String[]::new);
        String name = given.length == 0 ? "help" : given[0];
        Entry entry = COMMANDS.get(name);
        if (entry == null) {
            System.err.println("croupier: unknown subcommand '" + name + "'");
            help(System.err);
            return 2;
        }
        try {
            return entry.command().run(Arrays.copyOfRange(given, Math.min(1, given.length), given.length));
        } catch (UsageException e) {
            System.err.println("croupier " + name + ": " + e.getMessage());
            return 2;
        } catch (Exception | Error e) {
            System.err.println("croupier " + name + ": " + oneLine(e));
            if (verbose) {
                e.printStackTrace(System.err);
            }
            return 1;
        }
    }

    /** Prints stack traces of failures, wherever it stands among a subcommand's arguments. */
    static final String VERBOSE = "--verbose";

    /**
     * A failure in one line: the project's errors and the file system's already name what went
     * wrong and where; anything else is a defect, named by its class, with the way to its trace.
     */
    static String oneLine(Throwable e) {
        String line = switch (e) {
            case CroupierException c -> c.getMessage();
            case java.nio.file.FileSystemException f -> describe(f);
            case java.io.IOException io -> io.getMessage() == null ? io.toString() : io.getMessage();
            default -> "internal error: " + e + " (rerun with " + VERBOSE + " for where it happened)";
        };
        return line.replace('\n', ' ');
    }

    /**
     * A file system's failure in words, with the file it names: what {@link #oneLine} prints of
     * one, and what a command says after the file it could not write. Most such failures carry
     * no reason of their own; their class is the reason.
     */
    public static String describe(java.nio.file.FileSystemException f) {
        String file = f.getFile();
        return switch (f) {
            case java.nio.file.NoSuchFileException e -> file + ": no such file or folder";
            case java.nio.file.AccessDeniedException e -> file + ": permission denied";
            // a folder was asked for (or a new file) where something else stands
            case java.nio.file.FileAlreadyExistsException e ->
                    file + (file != null && java.nio.file.Files.isDirectory(java.nio.file.Path.of(file))
                            ? " already exists" : " is not a folder");
            default -> file + ": " + (f.getReason() != null ? f.getReason() : f.getClass().getSimpleName());
        };
    }

    private static int launcherOnly(String name) {
        System.err.println("croupier: '" + name + "' is run by the bin/croupier script, not the JVM");
        return 2;
    }

    private static int help(PrintStream out) {
        out.println("usage: bin/croupier <subcommand> [options]");
        out.println();
        int width = COMMANDS.keySet().stream().mapToInt(String::length).max().orElse(8);
        COMMANDS.forEach((name, entry) ->
                out.printf("  %-" + width + "s  %s%n", name, entry.summary()));
        out.println();
        out.println("Every subcommand takes --help, and --verbose to print the stack trace of a failure.");
        return 0;
    }

    private static int version() {
        String version = CroupierCli.class.getPackage().getImplementationVersion();
        System.out.println("croupier " + (version == null ? "0.1.0-SNAPSHOT" : version));
        System.out.println("java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")");
        return 0;
    }
}
