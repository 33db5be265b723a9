package dev.croupier.futures;

import java.util.List;

import dev.croupier.futures.internal.NodeService;

/**
 * What a running node process ({@code bin/croupier node}, {@link NodeServer}) reports about
 * itself at one moment: its store, its queue and the drivers using it. {@code bin/croupier
 * status} prints one per node. Immutable.
 *
 * @param address the address queried, {@code host:port}
 * @param storeUsedBytes bytes of values held in the store's memory
 * @param storeCapacityBytes the store's memory capacity; beyond it values spill
 * @param bytesSpilled bytes the store has written to its spill folder since the node started
 * @param tasksRunning tasks running now, at most one per CPU slot
 * @param tasksQueued tasks waiting for a CPU slot or for their arguments
 * @param driverSessions driver sessions the node holds, including ended ones whose objects it
 *     keeps until their lease runs out
 * @param tasks attempts by task name since the node started: a job's phases and its progress
 */
public record NodeStatus(
        String address,
        long storeUsedBytes,
        long storeCapacityBytes,
        long bytesSpilled,
        int tasksRunning,
        int tasksQueued,
        int driverSessions,
        List<TaskCount> tasks) {

    public NodeStatus {
        tasks = List.copyOf(tasks);
    }

    /** Attempts of one task name on a node: started, and of those, finished and failed. */
    public record TaskCount(String name, long started, long finished, long failed) {}

    /**
     * Asks the node at {@code hostPort} for its status, with a deadline of a few seconds.
     *
     * @throws CroupierException {@link ErrorCode#BAD_INPUT} if {@code hostPort} is not
     *     {@code host:port}; {@link ErrorCode#UNAVAILABLE}, naming the address, if no node
     *     answers there
     */
    public static NodeStatus query(String hostPort) {
        return NodeService.status(hostPort);
    }
}
