package dev.croupier.formats.reshard.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.formats.Reaction;
import dev.croupier.formats.reshard.BadSpecException;
import dev.croupier.formats.reshard.NameTemplate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * dSort's external key map ({@code ekm_file}): which output shard template each record goes
 * to. Two formats, JSON tried first:
 * <ul>
 *   <li>JSON: {@code {"shard-cats-%d": ["cat_.*", ...], "dogs-{00..99}.tar": ["dog_.*"]}};</li>
 *   <li>text: one {@code record_key<sep>template} per line; blank lines are skipped, and a line
 *       without exactly two fields goes to the {@code ekm_malformed_line} reaction.</li>
 * </ul>
 * Keys are unanchored regular expressions, as in dSort (a plain name is a regex too, so
 * {@code .} matches any character and partial matches count). A record key must match exactly
 * one entry; none or several go to the {@code ekm_missing_key} reaction. A key listed twice is
 * an error. Each template counts its own shards.
 *
 * <p>Thread-safety: immutable after {@link #read}.
 */
public final class KeyMap implements java.io.Serializable {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private final List<Pattern> patterns;
    private final List<Integer> templateOf;
    private final List<NameTemplate> templates;

    private KeyMap(List<Pattern> patterns, List<Integer> templateOf, List<NameTemplate> templates) {
        this.patterns = List.copyOf(patterns);
        this.templateOf = List.copyOf(templateOf);
        this.templates = List.copyOf(templates);
    }

    /**
     * @param file the key map file
     * @param separator field separator of the text format
     * @param malformedLine reaction to a text line that is not two fields
     * @param warnings receives one line per warning
     * @return the map
     * @throws IOException when the file cannot be read
     * @throws BadSpecException naming {@code ekm_file} and the entry for a bad regex, template or duplicate key
     */
    public static KeyMap read(Path file, String separator, Reaction malformedLine, Consumer<String> warnings)
            throws IOException {
        String text = Files.readString(file);
        List<Pattern> patterns = new ArrayList<>();
        List<Integer> templateOf = new ArrayList<>();
        List<NameTemplate> templates = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        JsonNode json = json(text);
        if (json == null && file.getFileName().toString().endsWith(".json")) {
            throw new BadSpecException("ekm_file", file.toString(), "a .json key map must be a JSON object of template -> [keys]");
        }
        if (json != null) {
            for (Map.Entry<String, JsonNode> e : json.properties()) {
                if (!e.getValue().isArray()) {
                    throw new BadSpecException("ekm_file", e.getKey(), "value must be a list of record keys");
                }
                int t = templateIndex(templates, e.getKey());
                for (JsonNode k : e.getValue()) {
                    add(patterns, templateOf, keys, k.asText(), t);
                }
            }
        } else {
            int lineNo = 0;
            for (String line : text.split("\n", -1)) {
                lineNo++;
                String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
                if (l.isBlank()) {
                    continue;
                }
                String[] parts = l.split(Pattern.quote(separator), -1);
                if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                    String msg = "ekm_file " + file + " line " + lineNo + ": '" + l + "' is not key" + separator + "template";
                    switch (malformedLine) {
                        case ABORT -> throw new BadSpecException("ekm_file", file.toString(), msg);
                        case WARN -> warnings.accept(msg);
                        case IGNORE -> { }
                    }
                    continue;
                }
                add(patterns, templateOf, keys, parts[0], templateIndex(templates, parts[1]));
            }
        }
        return new KeyMap(patterns, templateOf, templates);
    }

    private static JsonNode json(String text) {
        try {
            JsonNode n = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).readTree(text);
            return n != null && n.isObject() ? n : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static int templateIndex(List<NameTemplate> templates, String text) {
        for (int i = 0; i < templates.size(); i++) {
            if (templates.get(i).text().equals(text)) {
                return i;
            }
        }
        NameTemplate t = NameTemplate.parse("ekm_file", text);
        if (!t.hasRanges()) {
            throw new BadSpecException("ekm_file", text, "each key map value must be a range or %d template");
        }
        templates.add(t);
        return templates.size() - 1;
    }

    private static void add(List<Pattern> patterns, List<Integer> templateOf, Set<String> keys, String key, int t) {
        if (!keys.add(key)) {
            throw new BadSpecException("ekm_file", key, "record key listed twice");
        }
        try {
            patterns.add(Pattern.compile(key));
        } catch (PatternSyntaxException e) {
            throw new BadSpecException("ekm_file", key, "not a regular expression: " + e.getDescription());
        }
        templateOf.add(t);
    }

    /** @return the output templates, in the order the map first names them */
    public List<NameTemplate> templates() {
        return templates;
    }

    /**
     * @param recordKey a record key
     * @return the index in {@link #templates()} of the one entry matching the key, -1 when none
     *     matches, -2 when several do
     */
    public int templateFor(String recordKey) {
        int found = -1;
        for (int i = 0; i < patterns.size(); i++) {
            if (patterns.get(i).matcher(recordKey).find()) {
                if (found >= 0) {
                    return -2;
                }
                found = i;
            }
        }
        return found < 0 ? -1 : templateOf.get(found);
    }
}
