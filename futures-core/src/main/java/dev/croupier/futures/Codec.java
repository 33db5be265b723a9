package dev.croupier.futures;

import java.lang.foreign.MemorySegment;

/**
 * Encodes values of one type into object-store memory and back. Register one with
 * {@link Cluster.Builder#codec(Class, Codec)} to store a type without Java serialization.
 * Implementations must be thread-safe and must not keep {@code in} after {@code decode}
 * returns.
 */
public interface Codec<T> {

    /** Exact number of bytes {@link #encode} will write for {@code value}. */
    long encodedSize(T value);

    /** Writes {@code value} into {@code out}, which is exactly {@link #encodedSize} bytes long. */
    void encode(T value, MemorySegment out);

    /** Reads a value back from the bytes {@link #encode} wrote. */
    T decode(MemorySegment in);
}
