package dev.croupier.formats.reshard;

import java.util.Locale;

/**
 * How records are ordered before they are packed into output shards, with dSort's field names.
 *
 * <p>Thread-safety: immutable.
 *
 * @param kind the ordering
 * @param decreasing reverse the order (alphanumeric, md5, content)
 * @param seed shuffle seed, or {@code null} for a seed drawn from the clock
 * @param extension for {@link Kind#CONTENT}: the extension (dot included) of the file holding the sort key
 * @param contentKeyType for {@link Kind#CONTENT}: how that file's bytes compare
 */
public record Algorithm(Kind kind, boolean decreasing, Long seed, String extension, ContentKeyType contentKeyType)
        implements java.io.Serializable {

    /** The default algorithm: alphanumeric, increasing. */
    public static final Algorithm DEFAULT = new Algorithm(Kind.ALPHANUMERIC, false, null, null, null);

    /** The orderings. */
    public enum Kind {
        /** Extraction order: input shards in the given order, files in stored order. */
        NONE,
        /** Record keys compared as strings (UTF-16 code units, which is byte order for ASCII keys). */
        ALPHANUMERIC,
        /** Fisher-Yates shuffle from {@link java.util.SplittableRandom}; the same seed gives the same order. */
        SHUFFLE,
        /** The content of the file with {@code extension}, parsed as {@code content_key_type}. */
        CONTENT,
        /** Lower-case hex MD5 of the record key: a fixed pseudo-random order. */
        MD5;

        /** @return the spelling used in specs */
        public String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How content keys compare. */
    public enum ContentKeyType {
        /** A 64-bit signed decimal integer (surrounding white space allowed). */
        INT,
        /** A 64-bit float as Java's {@link Double#parseDouble} reads it. */
        FLOAT,
        /** The raw text, compared as a string. */
        STRING
    }

    /** Checks the combination, naming the field at fault. */
    public Algorithm {
        if (kind == null) {
            throw new BadSpecException("algorithm.kind", null, "kind is required");
        }
        if (kind == Kind.CONTENT) {
            if (extension == null || extension.isEmpty() || extension.charAt(0) != '.') {
                throw new BadSpecException("algorithm.extension", extension,
                        "content ordering needs the extension of the key file, starting with '.'");
            }
            if (contentKeyType == null) {
                throw new BadSpecException("algorithm.content_key_type", null,
                        "content ordering needs content_key_type: int, float or string");
            }
        }
        if (seed != null && seed < 0) {
            throw new BadSpecException("algorithm.seed", seed.toString(), "seed must be a non-negative integer");
        }
    }
}
