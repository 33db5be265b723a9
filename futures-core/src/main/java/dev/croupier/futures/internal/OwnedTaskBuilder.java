package dev.croupier.futures.internal;

import dev.croupier.futures.Affinity;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.ObjectRef;
import dev.croupier.futures.TaskBuilder;
import java.util.List;
import java.util.Objects;

/** Collects a task's options and submits it to its embedded cluster. Not thread-safe; use once. */
final class OwnedTaskBuilder<R> implements TaskBuilder<R> {

    private final OwnerCluster cluster;
    /** The user's function, and the same adapted to an argument array. */
    final Object function;
    final TaskSpec.Invocation invocation;
    final Object[] args;
    String name;
    int affinityNode = -1;
    Affinity affinity = Affinity.SOFT;
    int maxRetries = DEFAULT_MAX_RETRIES;
    boolean retryExceptions;
    int cpus = 1;
    private boolean submitted;

    OwnedTaskBuilder(OwnerCluster cluster, String defaultName, Object function, TaskSpec.Invocation invocation,
                     Object[] args) {
        this.function = function;
        this.cluster = cluster;
        this.name = defaultName;
        this.invocation = invocation;
        this.args = args;
    }

    @Override
    public TaskBuilder<R> name(String name) {
        this.name = Objects.requireNonNull(name, "name");
        return this;
    }

    @Override
    public TaskBuilder<R> onNode(int nodeId, Affinity affinity) {
        if (nodeId < 0) {
            throw bad("onNode", nodeId, ">= 0");
        }
        this.affinityNode = nodeId;
        this.affinity = Objects.requireNonNull(affinity, "affinity");
        return this;
    }

    @Override
    public TaskBuilder<R> maxRetries(int retries) {
        if (retries < 0) {
            throw bad("maxRetries", retries, ">= 0");
        }
        this.maxRetries = retries;
        return this;
    }

    @Override
    public TaskBuilder<R> retryExceptions(boolean retry) {
        this.retryExceptions = retry;
        return this;
    }

    @Override
    public TaskBuilder<R> cpus(int cpus) {
        if (cpus < 1) {
            throw bad("cpus", cpus, ">= 1");
        }
        this.cpus = cpus;
        return this;
    }

    @Override
    public <T> MultiReturnTaskBuilder<T> numReturns(int k) {
        if (k < 1) {
            throw bad("numReturns", k, ">= 1");
        }
        return () -> {
            markSubmitted();
            return cluster.<T>submit(this, k, true);
        };
    }

    @Override
    public ObjectRef<R> remote() {
        markSubmitted();
        List<ObjectRef<R>> refs = cluster.submit(this, 1, false);
        return refs.getFirst();
    }

    private void markSubmitted() {
        if (submitted) {
            throw new IllegalStateException("task '" + name + "' was already submitted by this builder");
        }
        submitted = true;
    }

    private CroupierException bad(String knob, Object value, String range) {
        return new CroupierException(ErrorCode.BAD_INPUT,
                "task '" + name + "': " + knob + " = " + value + " is out of range; allowed: " + range);
    }
}
