package dev.croupier.formats.reshard;

/**
 * A reshard spec that cannot run: unknown field, bad template, size with an unknown unit,
 * seed that is not an integer, value out of range. The message names the field and the value.
 *
 * <p>Thread-safety: immutable.
 */
public final class BadSpecException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String field;
    private final String value;

    /**
     * @param field the spec field, as spelled in JSON ({@code output_shard_size}, {@code algorithm.seed})
     * @param value the offending value as text, or {@code null}
     * @param problem what is wrong and what is allowed
     */
    public BadSpecException(String field, String value, String problem) {
        super(field + (value == null ? "" : ": '" + value + "'") + ": " + problem);
        this.field = field;
        this.value = value;
    }

    /** @return the spec field at fault */
    public String field() {
        return field;
    }

    /** @return the offending value, or {@code null} */
    public String value() {
        return value;
    }
}
