package dev.croupier.objectstore;

import java.util.HexFormat;

/**
 * The 128-bit name of an immutable object in a store.
 *
 * <p>Ids are chosen by the caller (the runtime derives them from task and return index); the
 * store only requires that an id is not reused while an object with that id exists.
 * {@link #toString()} gives 32 lowercase hex digits, high half first.
 *
 * <p>Thread-safety: immutable value, safe to share.
 *
 * @param high the upper 64 bits
 * @param low the lower 64 bits
 */
public record ObjectId(long high, long low) {

    /**
     * Returns the id with the given halves.
     *
     * @param high the upper 64 bits
     * @param low the lower 64 bits
     * @return the id
     */
    public static ObjectId of(long high, long low) {
        return new ObjectId(high, low);
    }

    /**
     * Parses the 32-hex-digit form produced by {@link #toString()}.
     *
     * @param hex 32 hex digits
     * @return the id
     * @throws IllegalArgumentException if {@code hex} is not 32 hex digits
     */
    public static ObjectId parse(String hex) {
        if (hex == null || hex.length() != 32) {
            throw new IllegalArgumentException("object id must be 32 hex digits, got '" + hex + "'");
        }
        try {
            return new ObjectId(HexFormat.fromHexDigitsToLong(hex, 0, 16),
                    HexFormat.fromHexDigitsToLong(hex, 16, 32));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("object id must be 32 hex digits, got '" + hex + "'", e);
        }
    }

    @Override
    public String toString() {
        HexFormat hex = HexFormat.of();
        return hex.toHexDigits(high) + hex.toHexDigits(low);
    }
}
