package dev.croupier.futures.internal;

import dev.croupier.futures.Codec;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses how each value is stored and reads it back, in a {@link ValueFrame}.
 *
 * <p>Design: raw bytes ({@code byte[]}, {@code ByteBuffer}, {@code MemorySegment}) are copied
 * once into the store and come back as read-only views (byte arrays as a copy, since the heap
 * cannot alias off-heap memory); boxed primitives and strings have a compact fixed encoding;
 * registered {@link Codec}s handle their exact class; anything else must be
 * {@link Serializable} and is read back only through an {@link ObjectInputFilter} allow-list
 * (JDK value and collection packages plus the user's patterns), so stored bytes can never
 * instantiate a class the user did not allow. Thread-safe (immutable after construction).
 */
final class ValueCodecs {

    /** JDK packages whose serializable classes are plain values or collections. */
    private static final String JDK_ALLOW_LIST = "java.lang.*;java.util.*;java.time.*;java.math.*";
    /**
     * What task functions, their arguments and task exceptions may hold beyond values: lambdas,
     * compiled patterns, and Croupier's own classes (the built-in jobs' functions capture their
     * settings). An exception's own class may be any {@link Throwable}: a task's failure names
     * library exceptions the driver never allowed by name; what they hold is still checked.
     */
    private static final String CODE_ALLOW_LIST = "java.lang.invoke.SerializedLambda;java.util.regex.Pattern;dev.croupier.**";

    private final Map<Class<?>, Integer> codecIds = new HashMap<>();
    private final List<Codec<Object>> codecs = new ArrayList<>();
    private final ObjectInputFilter filter;
    private final ObjectInputFilter codeFilter;

    /** Where serialized classes are resolved; null for the JDK's default (the caller's loader). */
    private final ClassLoader classes;

    ValueCodecs(Map<Class<?>, Codec<?>> userCodecs, List<String> allowList) {
        this(userCodecs, allowList, null);
    }

    /**
     * @param classes where the classes of serialized values and functions are found (a node's
     *     session loader, which also holds the code its driver shipped), or null for the default
     */
    @SuppressWarnings("unchecked")
    ValueCodecs(Map<Class<?>, Codec<?>> userCodecs, List<String> allowList, ClassLoader classes) {
        this.classes = classes;
        userCodecs.forEach((type, codec) -> {
            codecIds.put(type, codecs.size());
            codecs.add((Codec<Object>) codec);
        });
        StringBuilder pattern = new StringBuilder("maxdepth=100;").append(JDK_ALLOW_LIST);
        for (String p : allowList) {
            pattern.append(';').append(p);
        }
        this.filter = ObjectInputFilter.Config.createFilter(pattern + ";!*");
        ObjectInputFilter code = ObjectInputFilter.Config.createFilter(pattern + ";" + CODE_ALLOW_LIST + ";!*");
        // Three more kinds pass: a task exception's own class (see CODE_ALLOW_LIST); the lambda
        // a SerializedLambda resolves to, which only its capturing class can make; and a class
        // that is not Serializable, such as a lambda's capturing class: the stream can only hold
        // it as a Class reference, since ObjectInputStream makes no instance of such a class, so
        // a user's lambdas travel without an allow-list entry for the class that declares them.
        this.codeFilter = info -> {
            ObjectInputFilter.Status status = code.checkInput(info);
            Class<?> type = info.serialClass();
            if (status != ObjectInputFilter.Status.REJECTED || type == null || info.depth() > 100) {
                return status;
            }
            return Throwable.class.isAssignableFrom(type) || type.isHidden() && type.getName().contains("$$Lambda")
                    || !type.isArray() && !java.io.Serializable.class.isAssignableFrom(type)
                    ? ObjectInputFilter.Status.ALLOWED : status;
        };
    }

    /** A value measured and ready to be written into a frame of {@link #size()} bytes. */
    interface Encoded {
        long size();

        void writeTo(MemorySegment frame);
    }

    Encoded encode(Object value) {
        if (value == null) {
            return fixed(ValueFrame.NULL, 0, payload -> {});
        }
        Integer codecId = codecIds.get(value.getClass());
        if (codecId != null) {
            Codec<Object> codec = codecs.get(codecId);
            long size = codec.encodedSize(value);
            return new Framed(ValueFrame.CUSTOM, codecId, size, payload -> codec.encode(value, payload));
        }
        return switch (value) {
            case byte[] b -> fixed(ValueFrame.BYTES, b.length,
                    payload -> MemorySegment.copy(MemorySegment.ofArray(b), 0, payload, 0, b.length));
            case ByteBuffer bb -> {
                ByteBuffer view = bb.duplicate();
                yield fixed(ValueFrame.BYTE_BUFFER, view.remaining(),
                        payload -> MemorySegment.copy(MemorySegment.ofBuffer(view), 0, payload, 0, view.remaining()));
            }
            case MemorySegment s -> new Framed(ValueFrame.SEGMENT, 0, s.byteSize(),
                    payload -> MemorySegment.copy(s, 0, payload, 0, s.byteSize()));
            case Boolean b -> fixed(ValueFrame.BOOLEAN, 1, p -> p.set(ValueLayout.JAVA_BOOLEAN, 0, b));
            case Byte b -> fixed(ValueFrame.BYTE, 1, p -> p.set(ValueLayout.JAVA_BYTE, 0, b));
            case Short s -> fixed(ValueFrame.SHORT, 2, p -> p.set(ValueLayout.JAVA_SHORT_UNALIGNED, 0, s));
            case Character c -> fixed(ValueFrame.CHAR, 2, p -> p.set(ValueLayout.JAVA_CHAR_UNALIGNED, 0, c));
            case Integer i -> fixed(ValueFrame.INT, 4, p -> p.set(ValueLayout.JAVA_INT_UNALIGNED, 0, i));
            case Long l -> fixed(ValueFrame.LONG, 8, p -> p.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, l));
            case Float f -> fixed(ValueFrame.FLOAT, 4, p -> p.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 0, f));
            case Double d -> fixed(ValueFrame.DOUBLE, 8, p -> p.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0, d));
            case String s -> {
                byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
                yield fixed(ValueFrame.STRING, utf8.length,
                        payload -> MemorySegment.copy(MemorySegment.ofArray(utf8), 0, payload, 0, utf8.length));
            }
            case Serializable s -> {
                byte[] bytes = serialize(s);
                yield fixed(ValueFrame.JAVA_SERIALIZED, bytes.length,
                        payload -> MemorySegment.copy(MemorySegment.ofArray(bytes), 0, payload, 0, bytes.length));
            }
            default -> throw new CroupierException(ErrorCode.CODEC, "cannot store a value of "
                    + value.getClass().getName() + ": it is not Serializable and has no codec;"
                    + " register one with Cluster.Builder.codec(type, codec)");
        };
    }

    /**
     * Reads a value back. Byte buffers and segments come back as read-only views of
     * {@code frame}: they stay valid only while the frame's object is pinned, which
     * {@link #isView(MemorySegment)} tells the caller.
     */
    Object decode(MemorySegment frame) {
        byte tag = ValueFrame.tag(frame);
        MemorySegment p = ValueFrame.payload(frame);
        return switch (tag) {
            case ValueFrame.NULL -> null;
            case ValueFrame.BYTES -> p.toArray(ValueLayout.JAVA_BYTE);
            case ValueFrame.BYTE_BUFFER -> p.asReadOnly().asByteBuffer();
            case ValueFrame.SEGMENT -> p.asReadOnly();
            case ValueFrame.BOOLEAN -> p.get(ValueLayout.JAVA_BOOLEAN, 0);
            case ValueFrame.BYTE -> p.get(ValueLayout.JAVA_BYTE, 0);
            case ValueFrame.SHORT -> p.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0);
            case ValueFrame.CHAR -> p.get(ValueLayout.JAVA_CHAR_UNALIGNED, 0);
            case ValueFrame.INT -> p.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
            case ValueFrame.LONG -> p.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            case ValueFrame.FLOAT -> p.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0);
            case ValueFrame.DOUBLE -> p.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0);
            case ValueFrame.STRING -> new String(p.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            case ValueFrame.CUSTOM -> codecs.get(ValueFrame.codecId(frame)).decode(p.asReadOnly());
            case ValueFrame.JAVA_SERIALIZED -> deserialize(p.toArray(ValueLayout.JAVA_BYTE), filter);
            default -> throw new IllegalStateException("unknown value tag " + tag);
        };
    }

    /**
     * Reads back a task function or a task's exception: Java serialization through the value
     * allow-list widened by lambdas and Croupier's own classes.
     */
    Object decodeCode(MemorySegment frame) {
        if (ValueFrame.tag(frame) != ValueFrame.JAVA_SERIALIZED) {
            return decode(frame);
        }
        return deserialize(ValueFrame.payload(frame).toArray(ValueLayout.JAVA_BYTE), codeFilter);
    }

    /** Whether {@link #decode} of this frame returns a view that needs the object pinned. */
    static boolean isView(MemorySegment frame) {
        byte tag = ValueFrame.tag(frame);
        return tag == ValueFrame.SEGMENT || tag == ValueFrame.BYTE_BUFFER;
    }

    private Object deserialize(byte[] bytes, ObjectInputFilter filter) {
        Class<?>[] refused = new Class<?>[1];
        try (ObjectInputStream in = classes == null ? new ObjectInputStream(new ByteArrayInputStream(bytes))
                : new ResolvingInput(bytes, classes)) {
            in.setObjectInputFilter(info -> {
                ObjectInputFilter.Status status = filter.checkInput(info);
                if (status == ObjectInputFilter.Status.REJECTED && refused[0] == null) {
                    refused[0] = info.serialClass();
                }
                return status;
            });
            return in.readObject();
        } catch (java.io.InvalidClassException e) {
            String what = refused[0] == null ? e.getMessage() : "class " + refused[0].getName()
                    + " is not on the allow-list";
            throw new CroupierException(ErrorCode.CODEC, "refused to deserialize a value: " + what
                    + "; only JDK value classes and classes allowed with"
                    + " Cluster.Builder.allowSerializable(pattern) may be read", e);
        } catch (IOException | ClassNotFoundException e) {
            throw new CroupierException(ErrorCode.CODEC, "cannot deserialize a value: " + e, e);
        }
    }

    /** Resolves serialized classes through a given loader (the session's) instead of the caller's. */
    private static final class ResolvingInput extends ObjectInputStream {
        private final ClassLoader classes;

        ResolvingInput(byte[] bytes, ClassLoader classes) throws IOException {
            super(new ByteArrayInputStream(bytes));
            this.classes = classes;
        }

        @Override
        protected Class<?> resolveClass(java.io.ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            try {
                return Class.forName(desc.getName(), false, classes);
            } catch (ClassNotFoundException notThere) {
                return super.resolveClass(desc); // primitives' and arrays' names resolve there
            }
        }
    }

    private static byte[] serialize(Serializable value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        } catch (java.io.NotSerializableException e) {
            throw new CroupierException(ErrorCode.CODEC, "cannot serialize a value of " + value.getClass().getName()
                    + ": it holds an instance of " + e.getMessage() + ", which is not Serializable", e);
        } catch (IOException e) {
            throw new CroupierException(ErrorCode.CODEC,
                    "cannot serialize a value of " + value.getClass().getName() + ": " + e, e);
        }
        return bytes.toByteArray();
    }

    private static Encoded fixed(byte tag, long payloadBytes, PayloadWriter writer) {
        return new Framed(tag, 0, payloadBytes, writer);
    }

    @FunctionalInterface
    private interface PayloadWriter {
        void write(MemorySegment payload);
    }

    private record Framed(byte tag, int codecId, long payloadBytes, PayloadWriter writer) implements Encoded {
        @Override
        public long size() {
            return ValueFrame.HEADER_BYTES + payloadBytes;
        }

        @Override
        public void writeTo(MemorySegment frame) {
            ValueFrame.writeHeader(frame, tag, codecId);
            writer.write(frame.asSlice(ValueFrame.HEADER_BYTES, payloadBytes));
        }
    }
}
