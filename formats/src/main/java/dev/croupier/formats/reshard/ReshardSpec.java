package dev.croupier.formats.reshard;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;

/**
 * A reshard job's specification, with AIStore dSort's field names and local paths where dSort
 * has buckets. Build it from JSON ({@link ReshardSpecJson#parse(String)}) or with
 * {@link #builder()}; both validate the same way and fail with a {@link BadSpecException} naming
 * the field and value.
 * docs/reshard.md lists every field with its default.
 *
 * <p>Thread-safety: immutable.
 */
public final class ReshardSpec {
    /** Default {@code input_extension} when neither it nor the input names give one (dSort's). */
    public static final String DEFAULT_INPUT_EXTENSION = ".tar";
    /** Default reaction to a duplicate key+extension in one input shard (dSort's cluster default). */
    public static final Reaction DEFAULT_DUPLICATED_RECORDS = Reaction.IGNORE;
    /** Default reaction to a missing input shard (dSort's cluster default). */
    public static final Reaction DEFAULT_MISSING_SHARDS = Reaction.IGNORE;
    /** Default concurrency limits: 0 lets the job pick (the number of processors). */
    public static final int DEFAULT_CONCURRENCY = 0;
    /** Default separator of a text external key map (dSort's). */
    public static final String DEFAULT_EKM_FILE_SEP = "\t";
    /** Default reaction to a malformed key map line, and to a record matching no or several entries (dSort's). */
    public static final Reaction DEFAULT_EKM_REACTION = Reaction.ABORT;
    /** Most input or output names a template may expand to (dSort's list limit). */
    public static final int MAX_NAMES = 10_000_000;

    private final NameTemplate inputTemplate;
    private final List<String> inputPaths;
    private final String inputExtension;
    private final NameTemplate outputFormat;
    private final String outputExtension;
    private final long outputShardSize;
    private final long outputShardRecords;
    private final Algorithm algorithm;
    private final String ekmFile;
    private final String ekmFileSep;
    private final Reaction ekmMalformedLine;
    private final Reaction ekmMissingKey;
    private final MemoryLimit maxMemUsage;
    private final int extractConcurrency;
    private final int createConcurrency;
    private final boolean dryRun;
    private final Reaction duplicatedRecords;
    private final Reaction missingShards;
    private final String description;

    private ReshardSpec(Builder b) {
        this.inputTemplate = b.inputTemplate;
        this.inputPaths = b.inputPaths;
        this.inputExtension = b.resolvedInputExtension;
        this.outputFormat = b.outputTemplate;
        this.outputExtension = b.resolvedOutputExtension;
        this.outputShardSize = b.outputShardSize;
        this.outputShardRecords = b.outputShardRecords;
        this.algorithm = b.algorithm;
        this.ekmFile = b.ekmFile;
        this.ekmFileSep = b.ekmFileSep;
        this.ekmMalformedLine = b.ekmMalformedLine;
        this.ekmMissingKey = b.ekmMissingKey;
        this.maxMemUsage = b.maxMemUsage;
        this.extractConcurrency = b.extractConcurrency;
        this.createConcurrency = b.createConcurrency;
        this.dryRun = b.dryRun;
        this.duplicatedRecords = b.duplicatedRecords;
        this.missingShards = b.missingShards;
        this.description = b.description;
    }

    /** @return a builder with every default filled in */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The input shard paths, resolved against {@code base} (absolute names stay as they are), with
     * {@code input_extension} appended to names that carry no known extension.
     *
     * @param base the folder relative names are resolved against
     * @return the input shards, in order
     */
    public List<Path> inputShards(Path base) {
        List<String> names = inputTemplate != null ? inputTemplate.expand("input_format", MAX_NAMES) : inputPaths;
        List<Path> out = new ArrayList<>(names.size());
        for (String n : names) {
            String full = ShardFormat.forName(n).isPresent() ? n : n + inputExtension;
            out.add(base.resolve(full));
        }
        return out;
    }

    /**
     * @param index 0-based output shard index
     * @param base the folder relative names are resolved against
     * @return the output shard path
     * @throws ReshardException {@link ReshardException.Kind#OUT_OF_NAMES} when the template has fewer names
     */
    public Path outputShard(long index, Path base) {
        if (outputFormat == null) {
            throw new IllegalStateException("outputs are named by ekm_file " + ekmFile);
        }
        if (index >= outputFormat.count()) {
            throw new ReshardException(ReshardException.Kind.OUT_OF_NAMES, "output_format '" + outputFormat
                    + "' gives " + outputFormat.count() + " names but at least " + (index + 1)
                    + " output shards are needed");
        }
        String n = outputFormat.name(index);
        return base.resolve(ShardFormat.forName(n).isPresent() ? n : n + outputExtension);
    }

    /** @return the input template, if the input is a template */
    public Optional<NameTemplate> inputTemplate() {
        return Optional.ofNullable(inputTemplate);
    }

    /** @return the explicit input names, if the input is a list */
    public Optional<List<String>> inputPaths() {
        return Optional.ofNullable(inputPaths);
    }

    /** @return the input extension, dot included */
    public String inputExtension() {
        return inputExtension;
    }

    /** @return the output template; {@code null} when an external key map names the outputs */
    public NameTemplate outputFormat() {
        return outputFormat;
    }

    /** @return the output extension, dot included */
    public String outputExtension() {
        return outputExtension;
    }

    /** @return the target output shard size in content bytes, or -1 when a record count is used */
    public long outputShardSize() {
        return outputShardSize;
    }

    /** @return the target records per output shard, or -1 when a size is used */
    public long outputShardRecords() {
        return outputShardRecords;
    }

    /** @return the ordering */
    public Algorithm algorithm() {
        return algorithm;
    }

    /** @return the external key map file, if any */
    public Optional<String> ekmFile() {
        return Optional.ofNullable(ekmFile);
    }

    /** @return the separator of a text key map */
    public String ekmFileSep() {
        return ekmFileSep;
    }

    /** @return reaction to a malformed key map line */
    public Reaction ekmMalformedLine() {
        return ekmMalformedLine;
    }

    /** @return reaction to a record key matching no key map entry, or several */
    public Reaction ekmMissingKey() {
        return ekmMissingKey;
    }

    /** @return the memory limit for extracted records */
    public MemoryLimit maxMemUsage() {
        return maxMemUsage;
    }

    /** @return input shards extracted at once, 0 = auto */
    public int extractConcurrencyMaxLimit() {
        return extractConcurrency;
    }

    /** @return output shards created at once, 0 = auto */
    public int createConcurrencyMaxLimit() {
        return createConcurrency;
    }

    /** @return whether to plan only and write nothing */
    public boolean dryRun() {
        return dryRun;
    }

    /** @return reaction to a duplicate key+extension within one input shard */
    public Reaction duplicatedRecords() {
        return duplicatedRecords;
    }

    /** @return reaction to a missing input shard */
    public Reaction missingShards() {
        return missingShards;
    }

    /** @return free text */
    public String description() {
        return description;
    }

    /** @return a builder holding this spec's values, to derive a changed spec */
    public Builder toBuilder() {
        Builder b = builder();
        if (inputTemplate != null) {
            b.inputFormat(inputTemplate.text());
        } else {
            b.inputPaths(inputPaths);
        }
        b.inputExtension(inputExtension).outputFormat(outputFormat == null ? null : outputFormat.text())
                .outputExtension(outputExtension).ekmFileSep(ekmFileSep).ekmMalformedLine(ekmMalformedLine)
                .ekmMissingKey(ekmMissingKey)
                .algorithm(algorithm).maxMemUsage(maxMemUsage.toString())
                .extractConcurrencyMaxLimit(extractConcurrency).createConcurrencyMaxLimit(createConcurrency)
                .dryRun(dryRun).duplicatedRecords(duplicatedRecords).missingShards(missingShards)
                .description(description);
        b.ekmFile = ekmFile;
        if (outputShardSize >= 0) {
            b.outputShardSize(Long.toString(outputShardSize));
        }
        if (outputShardRecords >= 0) {
            b.outputShardRecords(outputShardRecords);
        }
        return b;
    }

    /**
     * Fills in and checks a {@link ReshardSpec}; every setter takes the JSON field's meaning and
     * {@link #build()} validates all of them, naming the field at fault.
     *
     * <p>Thread-safety: not thread-safe.
     */
    public static final class Builder {
        private String inputFormatText;
        private List<String> inputPathsValue;
        private String inputExtensionText;
        private String outputFormatText;
        private String outputExtensionText;
        private String outputShardSizeText;
        private long outputShardRecordsValue = -1;
        private Algorithm algorithm = Algorithm.DEFAULT;
        private String ekmFile;
        private String ekmFileSep = DEFAULT_EKM_FILE_SEP;
        private Reaction ekmMalformedLine = DEFAULT_EKM_REACTION;
        private Reaction ekmMissingKey = DEFAULT_EKM_REACTION;
        private String maxMemUsageText;
        private int extractConcurrency = DEFAULT_CONCURRENCY;
        private int createConcurrency = DEFAULT_CONCURRENCY;
        private boolean dryRun;
        private Reaction duplicatedRecords = DEFAULT_DUPLICATED_RECORDS;
        private Reaction missingShards = DEFAULT_MISSING_SHARDS;
        private String description = "";

        private NameTemplate inputTemplate;
        private List<String> inputPaths;
        private String resolvedInputExtension;
        private NameTemplate outputTemplate;
        private String resolvedOutputExtension;
        private long outputShardSize = -1;
        private long outputShardRecords = -1;
        private MemoryLimit maxMemUsage;

        private Builder() {
        }

        /** @param template {@code input_format} as a brace-range template @return this */
        public Builder inputFormat(String template) {
            this.inputFormatText = template;
            this.inputPathsValue = null;
            return this;
        }

        /** @param paths {@code input_format} as an explicit list of shard names @return this */
        public Builder inputPaths(List<String> paths) {
            this.inputPathsValue = paths == null ? null : List.copyOf(paths);
            this.inputFormatText = null;
            return this;
        }

        /** @param extension {@code input_extension} @return this */
        public Builder inputExtension(String extension) {
            this.inputExtensionText = extension;
            return this;
        }

        /** @param template {@code output_format} @return this */
        public Builder outputFormat(String template) {
            this.outputFormatText = template;
            return this;
        }

        /** @param extension {@code output_extension} @return this */
        public Builder outputExtension(String extension) {
            this.outputExtensionText = extension;
            return this;
        }

        /** @param size {@code output_shard_size}: bytes or a size with a unit @return this */
        public Builder outputShardSize(String size) {
            this.outputShardSizeText = size;
            return this;
        }

        /** @param records {@code output_shard_records} @return this */
        public Builder outputShardRecords(long records) {
            this.outputShardRecordsValue = records;
            return this;
        }

        /** @param algorithm {@code algorithm} @return this */
        public Builder algorithm(Algorithm algorithm) {
            this.algorithm = algorithm;
            return this;
        }

        /** @param file {@code ekm_file} @return this */
        public Builder ekmFile(String file) {
            this.ekmFile = file;
            return this;
        }

        /** @param sep {@code ekm_file_sep} @return this */
        public Builder ekmFileSep(String sep) {
            this.ekmFileSep = sep;
            return this;
        }

        /** @param reaction {@code ekm_malformed_line} @return this */
        public Builder ekmMalformedLine(Reaction reaction) {
            this.ekmMalformedLine = reaction;
            return this;
        }

        /** @param reaction {@code ekm_missing_key} @return this */
        public Builder ekmMissingKey(Reaction reaction) {
            this.ekmMissingKey = reaction;
            return this;
        }

        /** @param limit {@code max_mem_usage}: {@code NN%} or a size @return this */
        public Builder maxMemUsage(String limit) {
            this.maxMemUsageText = limit;
            return this;
        }

        /** @param n {@code extract_concurrency_max_limit} @return this */
        public Builder extractConcurrencyMaxLimit(int n) {
            this.extractConcurrency = n;
            return this;
        }

        /** @param n {@code create_concurrency_max_limit} @return this */
        public Builder createConcurrencyMaxLimit(int n) {
            this.createConcurrency = n;
            return this;
        }

        /** @param dryRun {@code dry_run} @return this */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        /** @param reaction {@code duplicated_records} @return this */
        public Builder duplicatedRecords(Reaction reaction) {
            this.duplicatedRecords = reaction;
            return this;
        }

        /** @param reaction {@code missing_shards} @return this */
        public Builder missingShards(Reaction reaction) {
            this.missingShards = reaction;
            return this;
        }

        /** @param text {@code description} @return this */
        public Builder description(String text) {
            this.description = text == null ? "" : text;
            return this;
        }

        /**
         * @return the validated spec
         * @throws BadSpecException naming the field and value of the first problem
         */
        public ReshardSpec build() {
            if (inputFormatText == null && inputPathsValue == null) {
                throw new BadSpecException("input_format", null, "required: a template or a list of shard names");
            }
            String lastInputName;
            if (inputFormatText != null) {
                inputTemplate = NameTemplate.parse("input_format", inputFormatText);
                inputPaths = null;
                lastInputName = inputFormatText;
            } else {
                if (inputPathsValue.isEmpty()) {
                    throw new BadSpecException("input_format", "[]", "the list of shard names is empty");
                }
                inputTemplate = null;
                inputPaths = inputPathsValue;
                lastInputName = inputPathsValue.getFirst();
            }
            resolvedInputExtension = extension("input_extension", inputExtensionText, lastInputName,
                    DEFAULT_INPUT_EXTENSION);
            if (ekmFile != null && ekmFile.isEmpty()) {
                throw new BadSpecException("ekm_file", ekmFile, "must name a key map file");
            }
            if (ekmFileSep == null || ekmFileSep.isEmpty()) {
                throw new BadSpecException("ekm_file_sep", ekmFileSep, "must not be empty");
            }
            if (ekmMalformedLine == null || ekmMissingKey == null) {
                throw new BadSpecException(ekmMalformedLine == null ? "ekm_malformed_line" : "ekm_missing_key", null,
                        "must be ignore, warn or abort");
            }
            if (outputFormatText == null && ekmFile == null) {
                throw new BadSpecException("output_format", null,
                        "required (unless ekm_file names the outputs): a template such as out/shard-{0000..0999}");
            }
            if (outputFormatText != null) {
                outputTemplate = NameTemplate.parse("output_format", outputFormatText);
                for (String sample : List.of(outputTemplate.name(0), outputTemplate.name(outputTemplate.count() - 1))) {
                    if (!dev.croupier.formats.MemberNames.isLocal(sample) && !Path.of(sample).isAbsolute()) {
                        throw new BadSpecException("output_format", outputFormatText, "names must not climb out with '..'");
                    }
                }
            } else {
                outputTemplate = null;
            }
            resolvedOutputExtension = extension("output_extension", outputExtensionText,
                    outputFormatText == null ? "" : outputFormatText, resolvedInputExtension);
            if (outputShardSizeText != null && outputShardRecordsValue >= 0) {
                throw new BadSpecException("output_shard_records", Long.toString(outputShardRecordsValue),
                        "give output_shard_size or output_shard_records, not both");
            }
            outputShardSize = outputShardSizeText == null ? -1 : ByteSize.parse("output_shard_size", outputShardSizeText);
            outputShardRecords = outputShardRecordsValue;
            if (outputShardRecordsValue == 0 || outputShardRecordsValue < -1) {
                throw new BadSpecException("output_shard_records", Long.toString(outputShardRecordsValue), "must be >= 1");
            }
            if (outputShardSize <= 0 && outputShardRecords < 0
                    && (outputTemplate == null || !(outputTemplate.hasRanges() && outputTemplate.bounded()))) {
                throw new BadSpecException("output_shard_size", outputShardSizeText,
                        "needs a size > 0 (or output_shard_records) unless output_format has a bounded range");
            }
            if (outputShardSize == 0) {
                outputShardSize = -1;
            }
            if (algorithm == null) {
                throw new BadSpecException("algorithm", null, "must not be null");
            }
            maxMemUsage = maxMemUsageText == null ? MemoryLimit.DEFAULT : MemoryLimit.parse("max_mem_usage", maxMemUsageText);
            if (extractConcurrency < 0) {
                throw new BadSpecException("extract_concurrency_max_limit", Integer.toString(extractConcurrency), "must be >= 0 (0 = auto)");
            }
            if (createConcurrency < 0) {
                throw new BadSpecException("create_concurrency_max_limit", Integer.toString(createConcurrency), "must be >= 0 (0 = auto)");
            }
            if (duplicatedRecords == null || missingShards == null) {
                throw new BadSpecException(duplicatedRecords == null ? "duplicated_records" : "missing_shards", null,
                        "must be ignore, warn or abort");
            }
            return new ReshardSpec(this);
        }

        private static String extension(String field, String given, String name, String fallback) {
            Optional<ShardFormat> fromName = ShardFormat.forName(name);
            String inferred = fromName.map(f -> suffix(name, f)).orElse(null);
            if (given != null && !given.isEmpty()) {
                String g = given.charAt(0) == '.' ? given : "." + given;
                if (ShardFormat.forExtension(g).isEmpty()) {
                    throw new BadSpecException(field, given, "unknown shard extension; known: " + ShardFormat.allExtensions());
                }
                if (inferred != null && !inferred.equalsIgnoreCase(g)) {
                    throw new BadSpecException(field, given, "conflicts with '" + inferred + "' at the end of '" + name + "'");
                }
                return g.toLowerCase(Locale.ROOT);
            }
            return inferred != null ? inferred : fallback;
        }

        private static String suffix(String name, ShardFormat f) {
            String lower = name.toLowerCase(Locale.ROOT);
            String best = "";
            for (String e : f.extensions()) {
                if (lower.endsWith(e) && e.length() > best.length()) {
                    best = e;
                }
            }
            return best;
        }
    }
}
