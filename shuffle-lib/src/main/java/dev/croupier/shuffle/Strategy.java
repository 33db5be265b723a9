package dev.croupier.shuffle;

/**
 * How the blocks travel from mappers to reducers; every strategy computes the same result.
 * See docs/shuffle.md for the task graph of each and when to pick it.
 */
public enum Strategy {
    /** M map tasks each make R blocks; R reduce tasks each pull one block from every mapper. */
    SIMPLE,
    /** Riffle: map outputs on one node are merged F at a time before reducers pull them. */
    RIFFLE,
    /** Magnet: map outputs are pushed in rounds to one merge task per node per round; reducers run where their merged blocks are. */
    MAGNET,
    /** Push*: MAGNET with one round of merges in flight overlapping the next round of maps, and map outputs freed once merged. */
    PUSH_PIPELINED,
    /** Rounds of maps; each round folds into per-reducer state and reports a partial result. */
    STREAMING,
    /** Chooses SIMPLE when the data fits comfortably in the stores' memory, else PUSH_PIPELINED. */
    AUTO
}
