package dev.croupier.formats.reshard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.croupier.formats.Reaction;

/**
 * Reads a {@link ReshardSpec} from JSON with AIStore dSort's field names, and writes one back.
 * Reading goes through {@link ReshardSpec#builder()}, so a JSON spec and a built one are
 * validated alike; JSON's own faults (not JSON, an unknown or duplicate field, a value of the
 * wrong type) fail with a {@link BadSpecException} naming the field and value as well.
 *
 * <p>Thread-safety: stateless; every method may be called from any thread.
 */
public final class ReshardSpecJson {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private ReshardSpecJson() {
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
     * @throws BadSpecException naming the field and value when the spec is bad
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
            parsed = JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
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
        ReshardSpec.Builder b = ReshardSpec.builder();
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
    private static Algorithm.Kind kind(String text) {
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
    static Long seed(String field, String text) {
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
     * @param spec a spec
     * @return the spec as JSON with every default filled in; {@link #parse(String)} reads it back
     *         to an equal spec
     */
    public static String write(ReshardSpec spec) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("input_format", spec.inputTemplate().isPresent()
                ? spec.inputTemplate().get().text() : spec.inputPaths().orElseThrow());
        m.put("input_extension", spec.inputExtension());
        if (spec.outputFormat() != null) {
            m.put("output_format", spec.outputFormat().text());
        }
        m.put("output_extension", spec.outputExtension());
        if (spec.outputShardSize() >= 0) {
            m.put("output_shard_size", Long.toString(spec.outputShardSize()));
        }
        if (spec.outputShardRecords() >= 0) {
            m.put("output_shard_records", spec.outputShardRecords());
        }
        Algorithm algorithm = spec.algorithm();
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
        spec.ekmFile().ifPresent(f -> m.put("ekm_file", f));
        m.put("ekm_file_sep", spec.ekmFileSep());
        m.put("ekm_malformed_line", spec.ekmMalformedLine().spelling());
        m.put("ekm_missing_key", spec.ekmMissingKey().spelling());
        m.put("max_mem_usage", spec.maxMemUsage().toString());
        m.put("extract_concurrency_max_limit", spec.extractConcurrencyMaxLimit());
        m.put("create_concurrency_max_limit", spec.createConcurrencyMaxLimit());
        m.put("dry_run", spec.dryRun());
        m.put("duplicated_records", spec.duplicatedRecords().spelling());
        m.put("missing_shards", spec.missingShards().spelling());
        m.put("description", spec.description());
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
