package dev.croupier.formats.reshard.internal;

import dev.croupier.formats.reshard.Algorithm;
import dev.croupier.formats.reshard.ReshardException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The record orderings of dSort as pure functions over record metadata. Every ordering is
 * total and deterministic: ties on the sort key are broken by extraction order (input shard,
 * then offset), so the same input gives the same output every run. {@code shuffle} without a
 * seed draws one from the clock; {@link #seedOf(Algorithm, long)} reports it so a run can be
 * repeated.
 *
 * <p>Thread-safety: stateless.
 */
public final class RecordOrdering {
    private RecordOrdering() {
    }

    /** Extraction order: input shard, then offset within it. */
    public static final Comparator<RecordMeta> EXTRACTION_ORDER =
            Comparator.comparingInt(RecordMeta::shard).thenComparingLong(RecordMeta::offset);

    /**
     * @param algorithm the algorithm
     * @param clockSeed the seed to use when the algorithm names none
     * @return the effective shuffle seed
     */
    public static long seedOf(Algorithm algorithm, long clockSeed) {
        return algorithm.seed() != null ? algorithm.seed() : clockSeed;
    }

    /**
     * Orders records.
     *
     * @param records the records in any order; not modified
     * @param algorithm the ordering
     * @param clockSeed the shuffle seed used when {@code algorithm} has none
     * @return a new list in the algorithm's order
     * @throws ReshardException {@link ReshardException.Kind#CONTENT_KEY} when a content key is missing or does not parse
     */
    public static List<RecordMeta> order(List<RecordMeta> records, Algorithm algorithm, long clockSeed) {
        RecordMeta[] a = records.toArray(new RecordMeta[0]);
        Arrays.sort(a, EXTRACTION_ORDER);
        switch (algorithm.kind()) {
            case NONE -> { }
            case ALPHANUMERIC -> sortBy(a, Comparator.comparing(RecordMeta::key), algorithm.decreasing());
            case MD5 -> sortByKeys(a, md5Keys(a), Comparator.naturalOrder(), algorithm.decreasing());
            case SHUFFLE -> shuffle(a, seedOf(algorithm, clockSeed));
            case CONTENT -> content(a, algorithm);
        }
        return new ArrayList<>(Arrays.asList(a));
    }

    private static void sortBy(RecordMeta[] a, Comparator<RecordMeta> c, boolean decreasing) {
        // Arrays.sort is stable, so equal keys keep extraction order in both directions.
        Arrays.sort(a, decreasing ? c.reversed() : c);
    }

    private static <K> void sortByKeys(RecordMeta[] a, K[] keys, Comparator<? super K> c, boolean decreasing) {
        Integer[] idx = new Integer[a.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        Comparator<Integer> byKey = (x, y) -> c.compare(keys[x], keys[y]);
        Arrays.sort(idx, decreasing ? byKey.reversed() : byKey);
        RecordMeta[] copy = a.clone();
        for (int i = 0; i < idx.length; i++) {
            a[i] = copy[idx[i]];
        }
    }

    /** Fisher-Yates from the end, as dSort does (with SplittableRandom instead of its PCG). */
    private static void shuffle(RecordMeta[] a, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = a.length - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            RecordMeta t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    private static String[] md5Keys(RecordMeta[] a) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has MD5", e);
        }
        String[] keys = new String[a.length];
        for (int i = 0; i < a.length; i++) {
            keys[i] = HexFormat.of().formatHex(md.digest(a[i].key().getBytes(StandardCharsets.UTF_8)));
        }
        return keys;
    }

    /**
     * @param key record key, for the hex MD5 order
     * @return the lower-case hex MD5 of the key's UTF-8 bytes
     */
    public static String md5(String key) {
        return md5Keys(new RecordMeta[] {new RecordMeta(key, 0, 0, 0, null, 0)})[0];
    }

    private static void content(RecordMeta[] a, Algorithm algorithm) {
        Comparable<?>[] k = new Comparable<?>[a.length];
        for (int i = 0; i < a.length; i++) {
            k[i] = contentValue(a[i], algorithm);
        }
        sortByKeys(a, k, RecordOrdering::compareKeys, algorithm.decreasing());
    }

    /**
     * The parsed content key of a record: a {@code Long}, {@code Double} or {@code String} as
     * {@code content_key_type} says.
     */
    private static Comparable<?> contentValue(RecordMeta m, Algorithm algorithm) {
        String raw = contentKey(m, algorithm);
        return switch (algorithm.contentKeyType()) {
            case STRING -> raw;
            case INT -> {
                String t = raw.strip();
                try {
                    yield Long.parseLong(t);
                } catch (NumberFormatException e) {
                    throw badKey(m, algorithm, "'" + t + "' is not a 64-bit integer");
                }
            }
            case FLOAT -> {
                String t = raw.strip();
                try {
                    yield Double.parseDouble(t);
                } catch (NumberFormatException e) {
                    throw badKey(m, algorithm, "'" + t + "' is not a float");
                }
            }
        };
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compareKeys(Comparable<?> x, Comparable<?> y) {
        return ((Comparable) x).compareTo(y);
    }

    /**
     * The total order {@link #order} sorts by, for every kind but {@code shuffle}: the
     * algorithm's key (reversed when {@code decreasing}), ties broken by
     * {@link #EXTRACTION_ORDER}. A distributed sort range-partitions records with it and gets
     * the same order as {@link #order} on all records at once. Keys are computed on each
     * comparison (an MD5 or a parse), which suits binary searches among splitters, not sorts.
     *
     * @param algorithm any kind but {@link Algorithm.Kind#SHUFFLE}
     * @return the comparator; it throws {@link ReshardException} ({@code CONTENT_KEY}) for a
     *     record whose content key is missing or does not parse
     */
    public static Comparator<RecordMeta> comparator(Algorithm algorithm) {
        Comparator<RecordMeta> byKey = switch (algorithm.kind()) {
            case NONE -> (x, y) -> 0;
            case ALPHANUMERIC -> Comparator.comparing(RecordMeta::key);
            case MD5 -> Comparator.comparing(m -> md5(m.key()));
            case CONTENT -> (x, y) -> compareKeys(contentValue(x, algorithm), contentValue(y, algorithm));
            case SHUFFLE -> throw new IllegalArgumentException("shuffle is not an order by key; see order(...)");
        };
        return (algorithm.decreasing() ? byKey.reversed() : byKey).thenComparing(EXTRACTION_ORDER);
    }

    private static String contentKey(RecordMeta m, Algorithm algorithm) {
        if (m.contentKey() == null) {
            throw badKey(m, algorithm, "the record has no " + algorithm.extension() + " file");
        }
        return m.contentKey();
    }

    private static ReshardException badKey(RecordMeta m, Algorithm algorithm, String problem) {
        return new ReshardException(ReshardException.Kind.CONTENT_KEY, "content key of record '" + m.key()
                + "' (input shard #" + m.shard() + ", offset " + m.offset() + ", extension " + algorithm.extension()
                + ", type " + algorithm.contentKeyType().name().toLowerCase(java.util.Locale.ROOT) + "): " + problem);
    }
}
