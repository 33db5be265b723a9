package dev.croupier.shuffle.kv;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How {@link GroupByJob} folds the values of one key into a fixed-size state, in place, with no
 * object per value: {@code init} a key's state, {@code add} each value, {@code merge} two states
 * of the same key (partial results of a streaming round, or of a combiner). The state bytes are
 * the output's values. Must be deterministic, and {@code merge} associative and commutative with
 * {@code add}, so every strategy and every grouping of blocks gives the same result. Called from
 * many task threads at once: keep no mutable fields.
 */
public interface Aggregate extends Serializable {

    /** Bytes of one key's state. */
    int stateBytes();

    /** Sets a new key's state at {@code at} of {@code states}. */
    void init(MemorySegment states, long at);

    /** Folds the value at {@code valueOffset} of {@code block} ({@code valueLength} bytes) into the state. */
    void add(MemorySegment states, long at, MemorySegment block, long valueOffset, int valueLength);

    /** Folds the state at {@code otherAt} of {@code other} into the state at {@code at} of {@code states}. */
    void merge(MemorySegment states, long at, MemorySegment other, long otherAt);

    /** Values are 8-byte little-endian longs; the state is their sum (wrapping on overflow). */
    Aggregate LONG_SUM = new LongFold(false);

    /** Counts the values of each key, whatever they hold; the state is an 8-byte little-endian long. */
    Aggregate COUNT = new LongFold(true);

    /** {@link #LONG_SUM} and {@link #COUNT}. */
    record LongFold(boolean count) implements Aggregate {
        private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

        @Override
        public int stateBytes() {
            return 8;
        }

        @Override
        public void init(MemorySegment states, long at) {
            states.set(LONG, at, 0L);
        }

        @Override
        public void add(MemorySegment states, long at, MemorySegment block, long valueOffset, int valueLength) {
            if (!count && valueLength != 8) {
                throw new dev.croupier.futures.CroupierException(dev.croupier.futures.ErrorCode.BAD_INPUT,
                        "LONG_SUM needs 8-byte values; the value at byte offset " + valueOffset + " has " + valueLength);
            }
            states.set(LONG, at, states.get(LONG, at) + (count ? 1 : block.get(LONG, valueOffset)));
        }

        @Override
        public void merge(MemorySegment states, long at, MemorySegment other, long otherAt) {
            states.set(LONG, at, states.get(LONG, at) + other.get(LONG, otherAt));
        }
    }
}
