package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.RefList;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one attempt on its node's worker thread: resolve the arguments (a local copy, a fetch
 * through the {@link Transport} from a live location, or, if an argument is on no live node,
 * give the attempt back to wait for its rebuild), call the function, encode the results into
 * the node's store (or seal in place what the task wrote with {@code TaskOutput}), record
 * stats, and report the outcome to the owner. Byte buffer and segment
 * arguments are read-only views pinned for the duration of the call. Thread-safe (stateless
 * between attempts).
 */
final class AttemptRunner {

    /** Where an attempt's outcome goes: the owner's state transitions. */
    interface Outcomes {
        void complete(TaskSpec.Attempt attempt, long[] sizes);

        void requeue(TaskSpec.Attempt attempt, ObjectEntry lost);

        void failed(TaskSpec.Attempt attempt, Throwable error);
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final ValueCodecs codecs;
    private final Transport transport;
    private final TaskStatsRecorder stats;
    private final Outcomes outcomes;

    AttemptRunner(ValueCodecs codecs, Transport transport, TaskStatsRecorder stats, Outcomes outcomes) {
        this.codecs = codecs;
        this.transport = transport;
        this.stats = stats;
        this.outcomes = outcomes;
    }

    /** Runs one attempt on its node's worker thread. */
    void run(TaskSpec.Attempt attempt) {
        TaskSpec spec = attempt.spec;
        Node node = attempt.node;
        synchronized (spec) {
            if (spec.current != attempt || spec.state != TaskSpec.State.QUEUED) {
                node.finished(attempt);
                return;
            }
            spec.state = TaskSpec.State.RUNNING;
            attempt.runner = Thread.currentThread();
        }
        long start = System.nanoTime();
        long cpuStart = THREADS.getCurrentThreadCpuTime();
        List<NodeStore.Reading> pins = new ArrayList<>(0);
        long[] bytesIn = {0};
        long[] sizes = null;
        LostArgument lost = null;
        Throwable error = null;
        try {
            Object[] values = new Object[spec.args.length];
            for (int i = 0; i < values.length; i++) {
                Object arg = spec.args[i];
                if (arg instanceof LocalObjectRef<?> ref) {
                    values[i] = readArgument(ref.entry, node, pins, bytesIn);
                } else if (arg instanceof RefList<?> list) {
                    List<Object> items = new ArrayList<>(list.refs().size());
                    for (ObjectRef<?> r : list.refs()) {
                        items.add(readArgument(((LocalObjectRef<?>) r).entry, node, pins, bytesIn));
                    }
                    values[i] = items;
                } else {
                    values[i] = arg;
                }
            }
            try (OutputScope scope = OutputScope.open(node.store())) {
                sizes = storeOutputs(spec, node, spec.invocation.invoke(values), scope);
            }
        } catch (LostArgument e) {
            lost = e;
        } catch (Throwable t) {
            error = t;
        } finally {
            pins.forEach(NodeStore.Reading::close);
            synchronized (spec) {
                attempt.runner = null;
            }
            Thread.interrupted();
        }
        // Stats first, so that whoever the outcome wakes up already sees this execution.
        stats.record(spec.name, node.id, error != null, start - attempt.readyNanos, System.nanoTime() - start,
                THREADS.getCurrentThreadCpuTime() - cpuStart, bytesIn[0], sizes == null ? 0 : Arrays.stream(sizes).sum());
        try {
            if (lost != null) {
                outcomes.requeue(attempt, lost.entry);
            } else if (error != null) {
                outcomes.failed(attempt, error);
            } else {
                outcomes.complete(attempt, sizes);
            }
        } finally {
            node.finished(attempt);
        }
    }

    /** An argument is on no live node: the task goes back to waiting while it is rebuilt. */
    private static final class LostArgument extends Exception {
        private static final long serialVersionUID = 1L;
        final transient ObjectEntry entry;

        LostArgument(ObjectEntry entry) {
            super(null, null, false, false);
            this.entry = entry;
        }
    }

    private Object readArgument(ObjectEntry entry, Node node, List<NodeStore.Reading> pins, long[] bytesIn)
            throws InterruptedException, LostArgument {
        while (true) {
            NodeStore.Reading reading = node.store().open(entry.id);
            if (reading != null) {
                bytesIn[0] += reading.frame().byteSize();
                if (ValueCodecs.isView(reading.frame())) {
                    pins.add(reading);
                    return codecs.decode(reading.frame());
                }
                try (reading) {
                    return codecs.decode(reading.frame());
                }
            }
            Node source = entry.liveLocation(node);
            if (source == node) {
                entry.removeLocation(node);
                source = entry.liveLocation(node);
            }
            if (source == null) {
                throw new LostArgument(entry);
            }
            if (transport.fetch(entry.id, source, node) >= 0 && !entry.addLocation(node)) {
                node.store().delete(entry.id);
            }
        }
    }

    private long[] storeOutputs(TaskSpec spec, Node node, Object result, OutputScope scope) throws InterruptedException {
        ObjectEntry[] outputs = spec.outputs;
        long[] sizes = new long[outputs.length];
        if (!spec.multiReturn) {
            sizes[0] = storeOutput(node, outputs[0], result, scope);
            return sizes;
        }
        if (!(result instanceof List<?> values) || values.size() != outputs.length) {
            throw new CroupierException(ErrorCode.BAD_INPUT, spec + " has numReturns(" + outputs.length
                    + ") but returned " + (result instanceof List<?> l ? "a List of " + l.size() : String.valueOf(result)));
        }
        for (int i = 0; i < outputs.length; i++) {
            sizes[i] = storeOutput(node, outputs[i], values.get(i), scope);
        }
        return sizes;
    }

    /** Seals memory the task wrote in place, or encodes the value into the store. */
    private long storeOutput(Node node, ObjectEntry output, Object value, OutputScope scope) throws InterruptedException {
        NodeStore.Scratch scratch = scope.take(value);
        return scratch != null ? node.store().adopt(output.id, scratch) : node.store().put(output.id, codecs.encode(value));
    }
}
