package dev.croupier.formats;

import java.util.Locale;

/**
 * What to do when input is questionable but not unreadable: a duplicate file in a shard, a
 * missing input shard. The names and meanings are those of AIStore dSort's reactions.
 *
 * <p>Thread-safety: immutable enum.
 */
public enum Reaction {
    /** Carry on silently; for duplicates the later copy replaces the earlier one. */
    IGNORE,
    /** Carry on as with {@link #IGNORE} and report one warning per event. */
    WARN,
    /** Fail with a typed error naming the shard and the offending name. */
    ABORT;

    /**
     * Parses {@code ignore}, {@code warn} or {@code abort} (case-insensitive).
     *
     * @param field the field being parsed, named in the error message
     * @param value the text to parse
     * @return the reaction
     * @throws IllegalArgumentException naming the field and value when it is none of the three
     */
    public static Reaction parse(String field, String value) {
        if (value != null) {
            switch (value.toLowerCase(Locale.ROOT)) {
                case "ignore" -> { return IGNORE; }
                case "warn" -> { return WARN; }
                case "abort" -> { return ABORT; }
                default -> { }
            }
        }
        throw new IllegalArgumentException(
                field + ": '" + value + "' is not a reaction; expected ignore, warn or abort");
    }

    /** @return the lower-case spelling used in specs ({@code ignore}, {@code warn}, {@code abort}) */
    public String spelling() {
        return name().toLowerCase(Locale.ROOT);
    }
}
