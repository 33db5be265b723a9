package dev.croupier.examples;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
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
    }

    private CroupierCli() {}

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /**
     * Runs the subcommand {@code args[0]} names with the rest, and returns the exit code: 2 for bad usage
     * (one line), 1 when a node cannot be reached (one line naming it: the fix is where the nodes
     * run, not in the code) or anything else fails (with its stack trace).
     */
    static int execute(String[] args) {
        String name = args.length == 0 ? "help" : args[0];
        Entry entry = COMMANDS.get(name);
        if (entry == null) {
            System.err.println("croupier: unknown subcommand '" + name + "'");
            help(System.err);
            return 2;
        }
        try {
            return entry.command().run(Arrays.copyOfRange(args, Math.min(1, args.length), args.length));
        } catch (UsageException e) {
            System.err.println("croupier " + name + ": " + e.getMessage());
            return 2;
        } catch (Exception e) {
            if (e instanceof CroupierException c && c.code() == ErrorCode.UNAVAILABLE) {
                System.err.println("croupier " + name + ": " + c.getMessage());
                return 1;
            }
            System.err.println("croupier " + name + ": " + e);
            e.printStackTrace(System.err);
            return 1;
        }
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
        out.println("Every subcommand takes --help.");
        return 0;
    }

    private static int version() {
        String version = CroupierCli.class.getPackage().getImplementationVersion();
        System.out.println("croupier " + (version == null ? "0.1.0-SNAPSHOT" : version));
        System.out.println("java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")");
        return 0;
    }
}
