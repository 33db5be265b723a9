package dev.croupier.futures.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import dev.croupier.futures.wire.Arg;
import dev.croupier.futures.wire.Attempt;
import dev.croupier.futures.wire.AttemptStats;
import dev.croupier.futures.wire.Location;
import dev.croupier.futures.wire.ObjectKey;
import dev.croupier.futures.wire.Outcome;
import dev.croupier.futures.wire.RefArg;
import dev.croupier.futures.wire.RefListArg;
import dev.croupier.futures.wire.TaskError;
import dev.croupier.objectstore.ObjectId;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.util.function.IntFunction;

/**
 * Converts the node protocol's Java messages ({@link AttemptCall}, {@link AttemptOutcome}) to
 * and from their protobuf wire form ({@code common.proto}). The process backend sends what it
 * makes; the embedded backend's serializing mode sends each message through {@link #roundTrip}
 * so that every test sees exactly the bytes a node process would. Payloads must already be
 * encoded ({@link Payload.Encoded}); they are wrapped, not copied. Stateless.
 */
final class WireCodec {

    private WireCodec() {}

    static ObjectKey key(ObjectId id) {
        return ObjectKey.newBuilder().setHigh(id.high()).setLow(id.low()).build();
    }

    static ObjectId id(ObjectKey key) {
        return new ObjectId(key.getHigh(), key.getLow());
    }

    /** The attempt's wire form; {@code addresses} names each node id's services (may return ""). */
    static Attempt toWire(AttemptCall call, IntFunction<String> addresses) {
        Attempt.Builder b = Attempt.newBuilder()
                .setAttemptId(call.attemptId())
                .setName(call.name())
                .setCpus(call.cpus())
                .setFunction(bytes(call.function()))
                .setStatelessFunction(((Payload.Encoded) call.function()).stateless())
                .setMultiReturn(call.multiReturn());
        for (Object arg : call.args()) {
            Arg.Builder a = Arg.newBuilder();
            if (arg instanceof AttemptCall.Ref ref) {
                a.setRef(ref(ref, addresses));
            } else if (arg instanceof AttemptCall.RefList list) {
                RefListArg.Builder refs = RefListArg.newBuilder();
                for (AttemptCall.Ref ref : list.refs()) {
                    refs.addRefs(ref(ref, addresses));
                }
                a.setRefs(refs);
            } else {
                a.setValue(bytes((Payload) arg));
            }
            b.addArgs(a);
        }
        for (ObjectId out : call.outputs()) {
            b.addOutputs(key(out));
        }
        if (call.code() != null) {
            b.setCodeClass(call.code().className()).setCodeSha256(ByteString.copyFrom(call.code().sha256()));
        }
        return b.build();
    }

    private static RefArg ref(AttemptCall.Ref ref, IntFunction<String> addresses) {
        RefArg.Builder r = RefArg.newBuilder().setId(key(ref.id())).setSize(ref.size());
        if (ref.inline() != null) {
            r.setInline(UnsafeByteOperations.unsafeWrap(ref.inline()));
        }
        for (int node : ref.nodes()) {
            r.addLocations(Location.newBuilder().setNode(node).setAddress(addresses.apply(node)));
        }
        return r.build();
    }

    private static ByteString bytes(Payload payload) {
        if (!(payload instanceof Payload.Encoded encoded)) {
            throw new IllegalStateException("a payload must be encoded before it goes on the wire");
        }
        return UnsafeByteOperations.unsafeWrap(encoded.frame());
    }

    /** The attempt a node reads off the wire; every field is checked before use. */
    static AttemptCall fromWire(Attempt a) {
        Object[] args = new Object[a.getArgsCount()];
        for (int i = 0; i < args.length; i++) {
            Arg arg = a.getArgs(i);
            args[i] = switch (arg.getKindCase()) {
                case VALUE -> new Payload.Encoded(arg.getValue().toByteArray(), false);
                case REF -> ref(arg.getRef());
                case REFS -> {
                    AttemptCall.Ref[] refs = new AttemptCall.Ref[arg.getRefs().getRefsCount()];
                    for (int j = 0; j < refs.length; j++) {
                        refs[j] = ref(arg.getRefs().getRefs(j));
                    }
                    yield new AttemptCall.RefList(refs);
                }
                case KIND_NOT_SET -> throw new CroupierException(ErrorCode.BAD_INPUT,
                        "attempt " + a.getAttemptId() + ": argument " + (i + 1) + " has no kind");
            };
        }
        ObjectId[] outputs = new ObjectId[a.getOutputsCount()];
        for (int i = 0; i < outputs.length; i++) {
            outputs[i] = id(a.getOutputs(i));
        }
        if (outputs.length == 0 || a.getCpus() < 1) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "attempt " + a.getAttemptId() + " of task '"
                    + a.getName() + "' names no output or no cpus");
        }
        return new AttemptCall(a.getAttemptId(), a.getName(), a.getCpus(),
                new Payload.Encoded(a.getFunction().toByteArray(), a.getStatelessFunction()), args, outputs,
                a.getMultiReturn(),
                a.getCodeClass().isEmpty() ? null : new CodeFingerprint(a.getCodeClass(), a.getCodeSha256().toByteArray(), null));
    }

    private static AttemptCall.Ref ref(RefArg r) {
        int[] nodes = new int[r.getLocationsCount()];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = r.getLocations(i).getNode();
        }
        return new AttemptCall.Ref(id(r.getId()), r.getSize(), nodes,
                r.getInline().isEmpty() ? null : r.getInline().toByteArray());
    }

    /** The outcome's wire form; the error travels as class, message, stack and, if it can, itself. */
    static Outcome toWire(AttemptOutcome o, ValueCodecs codecs) {
        Outcome.Builder b = Outcome.newBuilder()
                .setAttemptId(o.attemptId())
                .setKind(switch (o.kind()) {
                    case COMPLETED -> Outcome.Kind.COMPLETED;
                    case FAILED -> Outcome.Kind.FAILED;
                    case ARGUMENT_LOST -> Outcome.Kind.ARGUMENT_LOST;
                })
                .setStats(AttemptStats.newBuilder().setQueueNanos(o.queueNanos()).setWallNanos(o.wallNanos())
                        .setCpuNanos(o.cpuNanos()).setBytesIn(o.bytesIn()).setBytesOut(o.bytesOut()));
        for (long size : o.sizes()) {
            b.addSizes(size);
        }
        for (ObjectId copy : o.copies()) {
            b.addCopies(key(copy));
        }
        for (byte[] value : o.values()) {
            b.addValues(value == null ? ByteString.EMPTY : UnsafeByteOperations.unsafeWrap(value));
        }
        if (o.lost() != null) {
            b.setLost(key(o.lost()));
        }
        if (o.error() != null) {
            b.setError(error(o.error(), codecs));
        }
        return b.build();
    }

    private static TaskError error(Throwable t, ValueCodecs codecs) {
        StringWriter stack = new StringWriter();
        t.printStackTrace(new PrintWriter(stack));
        TaskError.Builder e = TaskError.newBuilder()
                .setClassName(t.getClass().getName())
                .setMessage(String.valueOf(t.getMessage()))
                .setStack(stack.toString());
        try {
            ValueCodecs.Encoded encoded = codecs.encode(t);
            byte[] frame = new byte[Math.toIntExact(encoded.size())];
            encoded.writeTo(MemorySegment.ofArray(frame));
            e.setSerialized(UnsafeByteOperations.unsafeWrap(frame));
        } catch (RuntimeException notSerializable) {
            // the class name, message and stack are what the driver gets
        }
        return e.build();
    }

    static AttemptOutcome fromWire(Outcome o, ValueCodecs codecs) {
        long[] sizes = new long[o.getSizesCount()];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = o.getSizes(i);
        }
        ObjectId[] copies = new ObjectId[o.getCopiesCount()];
        for (int i = 0; i < copies.length; i++) {
            copies[i] = id(o.getCopies(i));
        }
        AttemptOutcome.Kind kind = switch (o.getKind()) {
            case COMPLETED -> AttemptOutcome.Kind.COMPLETED;
            case FAILED -> AttemptOutcome.Kind.FAILED;
            case ARGUMENT_LOST -> AttemptOutcome.Kind.ARGUMENT_LOST;
            case UNRECOGNIZED -> throw new CroupierException(ErrorCode.BAD_INPUT,
                    "outcome of attempt " + o.getAttemptId() + " has an unknown kind");
        };
        byte[][] values = new byte[o.getValuesCount()][];
        for (int i = 0; i < values.length; i++) {
            values[i] = o.getValues(i).isEmpty() ? null : o.getValues(i).toByteArray();
        }
        AttemptStats s = o.getStats();
        return new AttemptOutcome(o.getAttemptId(), kind, sizes,
                kind == AttemptOutcome.Kind.FAILED ? error(o.getError(), codecs) : null,
                o.hasLost() ? id(o.getLost()) : null, copies,
                s.getQueueNanos(), s.getWallNanos(), s.getCpuNanos(), s.getBytesIn(), s.getBytesOut(), values);
    }

    private static Throwable error(TaskError e, ValueCodecs codecs) {
        if (!e.getSerialized().isEmpty()) {
            try {
                if (codecs.decodeCode(MemorySegment.ofArray(e.getSerialized().toByteArray())) instanceof Throwable t) {
                    return t;
                }
            } catch (RuntimeException refused) {
                // not on this driver's allow-list or class path: fall back to its description
            }
        }
        return new RemoteTaskError(e.getClassName(), e.getMessage(), e.getStack());
    }

    /** The message as a node process would receive it: encoded, then parsed back. */
    static AttemptCall roundTrip(AttemptCall call) {
        try {
            return fromWire(Attempt.parseFrom(toWire(call, node -> "").toByteArray()));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("an attempt did not survive its own encoding", e);
        }
    }

    /** The outcome as a driver would receive it from a node process. */
    static AttemptOutcome roundTrip(AttemptOutcome outcome, ValueCodecs codecs) {
        try {
            return fromWire(Outcome.parseFrom(toWire(outcome, codecs).toByteArray()), codecs);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("an outcome did not survive its own encoding", e);
        }
    }
}
