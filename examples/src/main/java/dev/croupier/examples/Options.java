package dev.croupier.examples;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.NodeServer;
import dev.croupier.shuffle.Strategy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The options of one subcommand: {@code --name value}, {@code --name=value}, boolean
 * {@code --flag}s and positional arguments. A valued option given twice keeps its last value
 * for {@link #string}, and all of them for {@link #strings}. Every lookup checks its value and throws a
 * {@link UsageException} naming the option and the value. Not thread-safe.
 */
public final class Options {

    private final String command;
    private final Map<String, String> values = new HashMap<>();
    /** Every value of each valued option, in order, for options that may repeat ({@code --set a=1 --set b=2}). */
    private final Map<String, List<String>> all = new HashMap<>();
    private final List<String> positional = new ArrayList<>();

    private Options(String command) {
        this.command = command;
    }

    /**
     * Parses {@code args}; {@code flags} take no value, {@code valued} take one. Anything else
     * starting with {@code --} is an error.
     */
    public static Options parse(String command, String[] args, Set<String> flags, Set<String> valued) {
        Options o = new Options(command);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                o.positional.add(a);
                continue;
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (flags.contains(name)) {
                if (value != null) {
                    throw new UsageException("--" + name + " takes no value, got '" + value + "'");
                }
                o.values.put(name, "true");
            } else if (valued.contains(name)) {
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new UsageException("--" + name + " needs a value");
                    }
                    value = args[++i];
                }
                o.values.put(name, value);
                o.all.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            } else {
                throw new UsageException("unknown option --" + name + " (see 'croupier " + command + " --help')");
            }
        }
        return o;
    }

    public List<String> positional() {
        return List.copyOf(positional);
    }

    /** Every value given to a repeatable option, in order; empty when it was not given. */
    public List<String> strings(String name) {
        return List.copyOf(all.getOrDefault(name, List.of()));
    }

    public boolean flag(String name) {
        return values.containsKey(name);
    }

    public String string(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    /** A shuffle strategy by its name on the command line: simple, riffle, magnet, push (push*) or auto. */
    public Strategy strategy(String name, Strategy fallback) {
        String raw = values.get(name);
        if (raw == null) {
            return fallback;
        }
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "simple" -> Strategy.SIMPLE;
            case "riffle" -> Strategy.RIFFLE;
            case "magnet" -> Strategy.MAGNET;
            case "push" -> Strategy.PUSH_PIPELINED;
            case "auto" -> Strategy.AUTO;
            default -> throw new UsageException("--" + name + " = '" + raw
                    + "' is not one of simple, riffle, magnet, push, auto");
        };
    }

    /** An integer option within {@code [min, max]}. */
    public int integer(String name, int fallback, int min, int max) {
        long v = longValue(name, fallback, min, max);
        return (int) v;
    }

    /** A long option within {@code [min, max]}. */
    public long longValue(String name, long fallback, long min, long max) {
        String raw = values.get(name);
        if (raw == null) {
            return fallback;
        }
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " = '" + raw + "' is not a whole number");
        }
        return inRange(name, raw, v, min, max);
    }

    /** A decimal option within {@code [min, max]}, such as a duration in seconds. */
    public double decimal(String name, double fallback, double min, double max) {
        String raw = values.get(name);
        if (raw == null) {
            return fallback;
        }
        double v;
        try {
            v = Double.parseDouble(raw.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " = '" + raw + "' is not a number");
        }
        if (!(v >= min && v <= max)) {
            throw new UsageException("--" + name + " = " + raw + " is out of range; allowed: " + min + ".." + max);
        }
        return v;
    }

    /** A size in bytes: a number with an optional k, m, g or t suffix (powers of 1024). */
    public long size(String name, long fallback, long min, long max) {
        String raw = values.get(name);
        return raw == null ? fallback : inRange(name, raw, parseSize(name, raw), min, max);
    }

    /** Parses a size as every Croupier flag does ({@link NodeServer#parseSize}), as a usage error if it is not one. */
    public static long parseSize(String option, String raw) {
        try {
            return NodeServer.parseSize(option.startsWith("-") ? option : "--" + option, raw);
        } catch (CroupierException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private long inRange(String name, String raw, long v, long min, long max) {
        if (v < min || v > max) {
            throw new UsageException("--" + name + " = " + raw + " is out of range; allowed: " + min + ".." + max);
        }
        return v;
    }
}
