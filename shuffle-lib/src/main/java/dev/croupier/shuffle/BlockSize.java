package dev.croupier.shuffle;

import java.io.Serializable;

/**
 * The size of a map output block in the unit a {@link PositionedReducer} counts positions in
 * (bytes of records, for record blocks). Evaluated inside the map task, where the block is in
 * hand, so the driver learns every block's size without fetching a block.
 */
@FunctionalInterface
public interface BlockSize<B> extends Serializable {
    long of(B block);
}
