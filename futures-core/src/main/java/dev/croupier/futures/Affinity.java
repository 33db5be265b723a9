package dev.croupier.futures;

/** How strictly a task keeps to the node named in {@link TaskBuilder#onNode(int, Affinity)}. */
public enum Affinity {
    /** Prefer the node; run elsewhere if it is dead. */
    SOFT,
    /** Run only on that node; the task fails if the node is dead. */
    HARD
}
