package dev.croupier.formats.reshard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.croupier.formats.Reaction;
import dev.croupier.formats.ShardFormat;

/**
 * A reshard job's specification, with AIStore dSort's field names and local paths where dSort
 * has buckets. Build it from JSON ({@link #parse(String)}) or with {@link #builder()}; both
 * validate the same way and fail with a {@link BadSpecException} naming the field and value.
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

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

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
     * Parses a JSON spec.
     *
     * @param json the spec text
     * @return the validated spec
     * @throws BadSpecException naming the field and value when the spec is bad
     */
    public static ReshardSpec parse(String json) {
        return parse(json, Map.of());
    }

    /**
     * Parses a JSON spec and applies overrides such as {@code output_shard_size=1MiB} or
     * {@code algorithm.kind=shuffle}, as the CLI's {@code --set} does. An override value is read
     * as JSON when it parses as JSON (numbers, booleans, lists), else as a string.
     *
     * @param json the spec text
     * @param overrides dotted field names to values
     * @return the validated spec
     */
    public static ReshardSpec parse(String json, Map<String, String> overrides) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new BadSpecException("spec", null, "not valid JSON: " + e.getOriginalMessage()
                    + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()
                    + ", column " + e.getLocation().getColumnNr()));
        }
        if (!(root instanceof ObjectNode obj)) {
            throw new BadSpecException("spec", null, "must be a JSON object");
        }
        for (Map.Entry<String, String> o : overrides.entrySet()) {
            override(obj, o.getKey(), o.getValue());
        }
        return fromJson(obj);
    }

    /**
     * @param file a JSON spec file
     * @return the validated spec
     * @throws IOException when the file cannot be read
     */
    public static ReshardSpec read(Path file) throws IOException {
        return parse(Files.readString(file));
    }

    private static void override(ObjectNode root, String dotted, String value) {
        String[] path = dotted.split("\\.");
        ObjectNode node = root;
        for (int i = 0; i < path.length - 1; i++) {
            JsonNode child = node.get(path[i]);
            if (!(child instanceof ObjectNode)) {
                child = node.putObject(path[i]);
            }
            node = (ObjectNode) child;
        }
        JsonNode parsed;
        try {
            // Trailing tokens make it text: "3 parsecs" is a string for the field to refuse, not the number 3.
            parsed = JSON.reader().with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                    .readTree(value);
        } catch (JsonProcessingException e) {
            parsed = null;
        }
        if (parsed == null || parsed.isMissingNode()) {
            node.put(path[path.length - 1], value);
        } else {
            node.set(path[path.length - 1], parsed);
        }
    }

    private static ReshardSpec fromJson(ObjectNode root) {
        Builder b = builder();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            String f = e.getKey();
            JsonNode v = e.getValue();
            switch (f) {
                case "input_format" -> {
                    if (v.isArray()) {
                        List<String> paths = new ArrayList<>();
                        v.forEach(p -> paths.add(text(f, p)));
                        b.inputPaths(paths);
                    } else if (v.isObject() && v.has("objnames")) {
                        List<String> paths = new ArrayList<>();
                        v.get("objnames").forEach(p -> paths.add(text(f + ".objnames", p)));
                        b.inputPaths(paths);
                    } else if (v.isObject() && v.has("template")) {
                        b.inputFormat(text(f + ".template", v.get("template")));
                    } else {
                        b.inputFormat(text(f, v));
                    }
                }
                case "input_extension", "extension" -> b.inputExtension(text(f, v));
                case "output_format" -> b.outputFormat(text(f, v));
                case "output_extension" -> b.outputExtension(text(f, v));
                case "output_shard_size" -> b.outputShardSize(v.isNumber() ? Long.toString(v.asLong()) : text(f, v));
                case "output_shard_records" -> b.outputShardRecords(integer(f, v));
                case "algorithm" -> b.algorithm(algorithm(v));
                case "ekm_file" -> b.ekmFile(text(f, v));
                case "ekm_file_sep" -> b.ekmFileSep(text(f, v));
                case "ekm_malformed_line" -> b.ekmMalformedLine(reaction(f, text(f, v)));
                case "ekm_missing_key" -> b.ekmMissingKey(reaction(f, text(f, v)));
                case "max_mem_usage" -> b.maxMemUsage(v.isNumber() ? Long.toString(v.asLong()) : text(f, v));
                case "extract_concurrency_max_limit" -> b.extractConcurrencyMaxLimit((int) integer(f, v));
                case "create_concurrency_max_limit" -> b.createConcurrencyMaxLimit((int) integer(f, v));
                case "dry_run" -> b.dryRun(bool(f, v));
                case "duplicated_records" -> b.duplicatedRecords(reaction(f, text(f, v)));
                case "missing_shards" -> b.missingShards(reaction(f, text(f, v)));
                case "description" -> b.description(text(f, v));
                default -> throw new BadSpecException(f, v.toString(), "unknown field; known fields: "
                        + String.join(", ", KNOWN_FIELDS));
            }
        }
        return b.build();
    }

    private static final List<String> KNOWN_FIELDS = List.of("input_format", "input_extension", "output_format",
            "output_extension", "output_shard_size", "output_shard_records", "algorithm", "ekm_file", "ekm_file_sep",
            "ekm_malformed_line", "ekm_missing_key",
            "max_mem_usage", "extract_concurrency_max_limit", "create_concurrency_max_limit", "dry_run",
            "duplicated_records", "missing_shards", "description");

    private static Algorithm algorithm(JsonNode v) {
        if (!v.isObject()) {
            throw new BadSpecException("algorithm", v.toString(), "must be an object {kind, decreasing, seed, ...}");
        }
        Algorithm.Kind kind = Algorithm.Kind.ALPHANUMERIC;
        boolean decreasing = false;
        Long seed = null;
        String extension = null;
        Algorithm.ContentKeyType type = null;
        for (Map.Entry<String, JsonNode> e : v.properties()) {
            String f = "algorithm." + e.getKey();
            JsonNode x = e.getValue();
            switch (e.getKey()) {
                case "kind" -> kind = kind(text(f, x));
                case "decreasing" -> decreasing = bool(f, x);
                case "seed" -> seed = seed(f, x);
                case "extension" -> extension = text(f, x);
                case "content_key_type" -> type = contentKeyType(text(f, x));
                default -> throw new BadSpecException(f, x.toString(),
                        "unknown field; known: kind, decreasing, seed, extension, content_key_type");
            }
        }
        return new Algorithm(kind, decreasing, seed, extension, type);
    }

    /**
     * @param text {@code none}, {@code alphanumeric} (or empty), {@code shuffle}, {@code content}, {@code md5}
     * @return the kind
     */
    public static Algorithm.Kind kind(String text) {
        if (text.isEmpty()) {
            return Algorithm.Kind.ALPHANUMERIC;
        }
        for (Algorithm.Kind k : Algorithm.Kind.values()) {
            if (k.spelling().equals(text)) {
                return k;
            }
        }
        throw new BadSpecException("algorithm.kind", text,
                "unknown kind; expected none, alphanumeric, shuffle, content or md5");
    }

    private static Algorithm.ContentKeyType contentKeyType(String text) {
        return switch (text) {
            case "int" -> Algorithm.ContentKeyType.INT;
            case "float" -> Algorithm.ContentKeyType.FLOAT;
            case "string" -> Algorithm.ContentKeyType.STRING;
            default -> throw new BadSpecException("algorithm.content_key_type", text,
                    "unknown content key type; expected int, float or string");
        };
    }

    /**
     * @param field the field name for errors
     * @param text a seed: a decimal integer in a string, as dSort takes it
     * @return the seed, or {@code null} for an empty string
     */
    public static Long seed(String field, String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        try {
            long s = Long.parseLong(text.strip());
            if (s < 0) {
                throw new BadSpecException(field, text, "seed must be a non-negative integer");
            }
            return s;
        } catch (NumberFormatException e) {
            throw new BadSpecException(field, text, "seed must be a decimal integer (in a string, as in dSort)");
        }
    }

    private static Long seed(String f, JsonNode x) {
        if (x.isIntegralNumber()) {
            return seed(f, x.asText());
        }
        if (!x.isTextual()) {
            throw new BadSpecException(f, x.toString(), "seed must be a decimal integer (in a string, as in dSort)");
        }
        return seed(f, x.asText());
    }

    private static Reaction reaction(String f, String text) {
        try {
            return Reaction.parse(f, text);
        } catch (IllegalArgumentException e) {
            throw new BadSpecException(f, text, "must be ignore, warn or abort");
        }
    }

    private static String text(String f, JsonNode v) {
        if (!v.isTextual()) {
            throw new BadSpecException(f, v.toString(), "must be a string");
        }
        return v.asText();
    }

    private static boolean bool(String f, JsonNode v) {
        if (!v.isBoolean()) {
            throw new BadSpecException(f, v.toString(), "must be true or false");
        }
        return v.asBoolean();
    }

    private static long integer(String f, JsonNode v) {
        if (v.isIntegralNumber()) {
            return v.asLong();
        }
        if (v.isTextual()) {
            try {
                return Long.parseLong(v.asText().strip());
            } catch (NumberFormatException e) {
                throw new BadSpecException(f, v.asText(), "must be an integer");
            }
        }
        throw new BadSpecException(f, v.toString(), "must be an integer");
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

    /** @return the spec as JSON with every default filled in (what {@code --verbose} prints) */
    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("input_format", inputTemplate != null ? inputTemplate.text() : inputPaths);
        m.put("input_extension", inputExtension);
        if (outputFormat != null) {
            m.put("output_format", outputFormat.text());
        }
        m.put("output_extension", outputExtension);
        if (outputShardSize >= 0) {
            m.put("output_shard_size", Long.toString(outputShardSize));
        }
        if (outputShardRecords >= 0) {
            m.put("output_shard_records", outputShardRecords);
        }
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("kind", algorithm.kind().spelling());
        a.put("decreasing", algorithm.decreasing());
        a.put("seed", algorithm.seed() == null ? "" : algorithm.seed().toString());
        if (algorithm.extension() != null) {
            a.put("extension", algorithm.extension());
        }
        if (algorithm.contentKeyType() != null) {
            a.put("content_key_type", algorithm.contentKeyType().name().toLowerCase(Locale.ROOT));
        }
        m.put("algorithm", a);
        if (ekmFile != null) {
            m.put("ekm_file", ekmFile);
        }
        m.put("ekm_file_sep", ekmFileSep);
        m.put("ekm_malformed_line", ekmMalformedLine.spelling());
        m.put("ekm_missing_key", ekmMissingKey.spelling());
        m.put("max_mem_usage", maxMemUsage.toString());
        m.put("extract_concurrency_max_limit", extractConcurrency);
        m.put("create_concurrency_max_limit", createConcurrency);
        m.put("dry_run", dryRun);
        m.put("duplicated_records", duplicatedRecords.spelling());
        m.put("missing_shards", missingShards.spelling());
        m.put("description", description);
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
