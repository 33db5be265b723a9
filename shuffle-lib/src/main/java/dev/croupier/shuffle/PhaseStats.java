package dev.croupier.shuffle;

/**
 * One phase of a shuffle as the driver saw it: tasks submitted, seconds from the phase's first
 * submission to its last completion, and bytes its tasks produced. Immutable.
 */
public record PhaseStats(String name, int tasks, double seconds, long bytesOut) {}
