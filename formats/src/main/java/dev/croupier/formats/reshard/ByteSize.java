package dev.croupier.formats.reshard;

import java.util.Locale;

/**
 * Parses sizes such as {@code 10240}, {@code 256KiB}, {@code 1GB}, {@code 1.5MiB}. IEC units
 * (KiB, MiB, GiB, TiB) are powers of 1024; SI units (KB, MB, GB, TB) are powers of 1000; B or
 * no unit means bytes. Units are case-insensitive. (dSort reads {@code KB} as 1024; Croupier keeps
 * the SI meaning, and docs/reshard.md says so.)
 *
 * <p>Thread-safety: stateless.
 */
public final class ByteSize {
    private ByteSize() {
    }

    /**
     * @param field the spec field, named in errors
     * @param text the size text
     * @return the size in bytes, &ge; 0
     * @throws BadSpecException naming the field and value for a unit it does not know or a bad number
     */
    public static long parse(String field, String text) {
        if (text == null || text.isBlank()) {
            throw new BadSpecException(field, text, "size is empty");
        }
        String t = text.strip();
        int i = 0;
        while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.')) {
            i++;
        }
        String number = t.substring(0, i);
        String unit = t.substring(i).strip().toLowerCase(Locale.ROOT);
        long multiplier = switch (unit) {
            case "", "b" -> 1L;
            case "kib" -> 1L << 10;
            case "mib" -> 1L << 20;
            case "gib" -> 1L << 30;
            case "tib" -> 1L << 40;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            case "tb" -> 1_000_000_000_000L;
            default -> throw new BadSpecException(field, text, "unknown size unit '" + t.substring(i).strip()
                    + "'; use B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000)");
        };
        double value;
        try {
            value = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw new BadSpecException(field, text, "size needs a non-negative number before its unit");
        }
        double bytes = value * multiplier;
        if (bytes >= Long.MAX_VALUE) {
            throw new BadSpecException(field, text, "size is too large");
        }
        return (long) Math.ceil(bytes);
    }
}
