package dev.croupier.formats;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The shard formats Croupier reads and writes, each with the file extensions that select it.
 * {@link #forPath(Path)} resolves a shard by the longest matching extension, so
 * {@code x.tar.gz} is {@link #TAR_GZ}, not {@link #TAR}.
 *
 * <p>Thread-safety: immutable enum; readers and writers it opens are single-threaded.
 */
public enum ShardFormat {
    /** POSIX tar (ustar, GNU and pax headers, long names); the WebDataset layout. */
    TAR(".tar"),
    /** tar compressed with gzip (concatenated gzip members are read as one stream). */
    TAR_GZ(".tar.gz", ".tgz"),
    /** tar compressed with the LZ4 frame format. */
    TAR_LZ4(".tar.lz4"),
    /** zip; files are stored uncompressed, since dataset files are usually compressed already. */
    ZIP(".zip"),
    /**
     * A stream of msgpack maps, one per sample: keys are field names (the extension without
     * its dot), values binary or str; an optional first entry {@code __key__} holds the key.
     */
    MSGPACK(".msgpack", ".mpk"),
    /**
     * TensorFlow TFRecord: {@code u64 length | u32 masked CRC-32C(length) | data | u32 masked
     * CRC-32C(data)}, little-endian; each record is one file with extension
     * {@value TfRecordShardReader#EXTENSION} and no stored key.
     */
    TFRECORD(".tfrecord", ".tfrecords"),
    /**
     * Sort Benchmark (gensort) 100-byte records: a 10-byte key and a 90-byte value; each record
     * is one file with extension {@value SortBenchmarkShardReader#EXTENSION} under the hex of its key.
     */
    SORT_BENCHMARK(".gensort");

    private final List<String> extensions;

    ShardFormat(String... extensions) {
        this.extensions = List.of(extensions);
    }

    /** @return the extensions selecting this format, dot included, the default first */
    public List<String> extensions() {
        return extensions;
    }

    /** @return the extension written when a template gives none */
    public String defaultExtension() {
        return extensions.getFirst();
    }

    /** @return whether this format is a tar archive (plain or compressed) */
    public boolean isTar() {
        return this == TAR || this == TAR_GZ || this == TAR_LZ4;
    }

    /**
     * @param extension an extension with or without its leading dot ({@code tar.gz}, {@code .tgz})
     * @return the format it selects, if any
     */
    public static Optional<ShardFormat> forExtension(String extension) {
        if (extension == null || extension.isEmpty()) {
            return Optional.empty();
        }
        String e = (extension.charAt(0) == '.' ? extension : "." + extension).toLowerCase(Locale.ROOT);
        for (ShardFormat f : values()) {
            if (f.extensions.contains(e)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /**
     * @param name a file name or path
     * @return the format whose extension ends the name, the longest match winning
     */
    public static Optional<ShardFormat> forName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        ShardFormat best = null;
        int bestLength = 0;
        for (ShardFormat f : values()) {
            for (String e : f.extensions) {
                if (lower.endsWith(e) && e.length() > bestLength) {
                    best = f;
                    bestLength = e.length();
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * @param shard a shard path
     * @return its format
     * @throws IllegalArgumentException naming the path and the known extensions when none matches
     */
    public static ShardFormat forPath(Path shard) {
        return forName(shard.getFileName().toString()).orElseThrow(() -> new IllegalArgumentException(
                "shard " + shard + " has no known extension; known: " + allExtensions()));
    }

    /** @return every known extension, for error messages */
    public static List<String> allExtensions() {
        return java.util.Arrays.stream(values()).flatMap(f -> f.extensions.stream()).toList();
    }

    /**
     * Opens a reader over a shard of this format.
     *
     * @param shard the shard file
     * @return a reader positioned before the first file
     * @throws IOException when the file cannot be opened or its first header is bad
     */
    public ShardReader open(Path shard) throws IOException {
        return switch (this) {
            case TAR, TAR_GZ, TAR_LZ4 -> new TarShardReader(shard, this);
            case ZIP -> new ZipShardReader(shard);
            case MSGPACK -> new MsgpackShardReader(shard);
            case TFRECORD -> new TfRecordShardReader(shard);
            case SORT_BENCHMARK -> new SortBenchmarkShardReader(shard);
        };
    }

    /**
     * Creates a writer for a shard of this format. It writes a temporary file next to
     * {@code target}; see {@link ShardWriter} for the commit protocol.
     *
     * @param target the final name of the shard; its directory must exist
     * @return a writer
     * @throws IOException when the temporary file cannot be created
     */
    public ShardWriter create(Path target) throws IOException {
        return switch (this) {
            case TAR, TAR_GZ, TAR_LZ4 -> new TarShardWriter(target, this);
            case ZIP -> new ZipShardWriter(target);
            case MSGPACK -> new MsgpackShardWriter(target);
            case TFRECORD -> new TfRecordShardWriter(target);
            case SORT_BENCHMARK -> new SortBenchmarkShardWriter(target);
        };
    }
}
