package dev.croupier.formats.reshard;

import java.util.ArrayList;
import java.util.List;

/**
 * A shard name template with bash brace ranges, as dSort's bash templates:
 * {@code shards/train-{0000..0999}.tar} or {@code p-{0..10..2}-q}. Each range is
 * {@code {START..END}} or {@code {START..END..STEP}} with 0 &le; START &le; END and STEP &gt; 0;
 * numbers are zero-padded to {@code min(len(START), len(END))} digits. Several ranges iterate
 * like an odometer, the last one fastest. A template without ranges names one shard. A printf
 * template with exactly one {@code %d} or {@code %0Nd} (dSort's fmt template) names shards
 * 0, 1, 2... without bound. dSort's {@code @} template is accepted too: {@code p-@00100-s}
 * means {@code p-{00000..00100}-s} (start 0, width = digits after {@code @}).
 *
 * <p>Thread-safety: immutable.
 */
public final class NameTemplate implements java.io.Serializable {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private static final java.util.regex.Pattern AT = java.util.regex.Pattern.compile("@(\\d+)");
    private static final java.util.regex.Pattern FMT = java.util.regex.Pattern.compile("%0?(\\d+)?d");

    private final String text;
    private final List<String> literals;
    private final long[] starts;
    private final long[] steps;
    private final long[] counts;
    private final int[] widths;
    private final long count;

    private NameTemplate(String text, List<String> literals, long[] starts, long[] steps, long[] counts,
                         int[] widths, long count) {
        this.text = text;
        this.literals = literals;
        this.starts = starts;
        this.steps = steps;
        this.counts = counts;
        this.widths = widths;
        this.count = count;
    }

    /**
     * @param field the spec field holding the template, named in errors
     * @param text the template
     * @return the parsed template
     * @throws BadSpecException naming the field and template when a range is malformed
     */
    public static NameTemplate parse(String field, String text) {
        if (text == null || text.isEmpty()) {
            throw new BadSpecException(field, text, "template is empty");
        }
        if (text.indexOf('{') < 0 && AT.matcher(text).find()) {
            // dSort's @ template: @NNN is the range 0..NNN padded to len(NNN), the same as {000..NNN}.
            String bash = AT.matcher(text).replaceAll(m -> "{" + "0".repeat(m.group(1).length()) + ".." + m.group(1) + "}");
            NameTemplate t = parse(field, bash);
            return new NameTemplate(text, t.literals, t.starts, t.steps, t.counts, t.widths, t.count);
        }
        java.util.regex.Matcher fmt = FMT.matcher(text);
        if (fmt.find()) {
            int at = fmt.start();
            int end = fmt.end();
            int width = fmt.group(1) == null ? 0 : Integer.parseInt(fmt.group(1));
            if (fmt.find() || text.indexOf('{') >= 0) {
                throw new BadSpecException(field, text, "a %d template takes exactly one %d or %0Nd and no brace range");
            }
            return new NameTemplate(text, List.of(text.substring(0, at), text.substring(end)), new long[] {0},
                    new long[] {1}, new long[] {Long.MAX_VALUE}, new int[] {width}, Long.MAX_VALUE);
        }
        List<String> literals = new ArrayList<>();
        List<long[]> ranges = new ArrayList<>();
        List<Integer> widths = new ArrayList<>();
        int i = 0;
        StringBuilder literal = new StringBuilder();
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '}') {
                throw new BadSpecException(field, text, "'}' at index " + i + " closes no range");
            }
            if (c != '{') {
                literal.append(c);
                i++;
                continue;
            }
            int close = text.indexOf('}', i);
            if (close < 0) {
                throw new BadSpecException(field, text, "'{' at index " + i + " is never closed");
            }
            String[] parts = text.substring(i + 1, close).split("\\.\\.", -1);
            if (parts.length < 2 || parts.length > 3) {
                throw new BadSpecException(field, text, "range '" + text.substring(i, close + 1)
                        + "' must be {START..END} or {START..END..STEP}");
            }
            long start = number(field, text, parts[0], "START");
            long end = number(field, text, parts[1], "END");
            long step = parts.length == 3 ? number(field, text, parts[2], "STEP") : 1;
            if (start > end) {
                throw new BadSpecException(field, text, "range START " + start + " is greater than END " + end);
            }
            if (step <= 0) {
                throw new BadSpecException(field, text, "range STEP must be > 0, got " + step);
            }
            literals.add(literal.toString());
            literal.setLength(0);
            ranges.add(new long[] {start, step, (end - start) / step + 1});
            widths.add(Math.min(parts[0].length(), parts[1].length()));
            i = close + 1;
        }
        literals.add(literal.toString());
        int n = ranges.size();
        long[] starts = new long[n];
        long[] steps = new long[n];
        long[] counts = new long[n];
        int[] w = new int[n];
        long total = 1;
        for (int r = 0; r < n; r++) {
            starts[r] = ranges.get(r)[0];
            steps[r] = ranges.get(r)[1];
            counts[r] = ranges.get(r)[2];
            w[r] = widths.get(r);
            try {
                total = Math.multiplyExact(total, counts[r]);
            } catch (ArithmeticException e) {
                throw new BadSpecException(field, text, "template gives more than " + Long.MAX_VALUE + " names");
            }
        }
        return new NameTemplate(text, List.copyOf(literals), starts, steps, counts, w, total);
    }

    private static long number(String field, String text, String part, String what) {
        if (part.isEmpty() || !part.chars().allMatch(ch -> ch >= '0' && ch <= '9') || part.length() > 18) {
            throw new BadSpecException(field, text, "range " + what + " '" + part
                    + "' is not a non-negative decimal number");
        }
        return Long.parseLong(part);
    }

    /** @return the template text */
    public String text() {
        return text;
    }

    /** @return how many names the template gives */
    public long count() {
        return count;
    }

    /** @return whether the template has at least one range */
    public boolean hasRanges() {
        return starts.length > 0;
    }

    /** @return whether the template gives a bounded number of names (a {@code %d} template does not) */
    public boolean bounded() {
        return count < Long.MAX_VALUE;
    }

    /**
     * @param index 0-based name index, below {@link #count()}
     * @return the name at that position (odometer order, last range fastest)
     */
    public String name(long index) {
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException("template '" + text + "' has " + count + " names, asked for #" + index);
        }
        long[] digits = new long[starts.length];
        long rest = index;
        for (int r = starts.length - 1; r >= 0; r--) {
            digits[r] = starts[r] + (rest % counts[r]) * steps[r];
            rest /= counts[r];
        }
        StringBuilder b = new StringBuilder(literals.getFirst());
        for (int r = 0; r < starts.length; r++) {
            String d = Long.toString(digits[r]);
            b.append("0".repeat(Math.max(0, widths[r] - d.length()))).append(d).append(literals.get(r + 1));
        }
        return b.toString();
    }

    /**
     * @return every name, in order
     * @throws BadSpecException when there are more than {@code limit} names
     * @param field the spec field, named when the template is too large
     * @param limit the most names the caller will take
     */
    public List<String> expand(String field, int limit) {
        if (count > limit) {
            throw new BadSpecException(field, text, "template gives " + count + " names, more than the limit of " + limit);
        }
        List<String> out = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            out.add(name(i));
        }
        return out;
    }

    @Override
    public String toString() {
        return text;
    }
}
