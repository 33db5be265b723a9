package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.lang.invoke.SerializedLambda;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The class that holds a task's code (a lambda's capturing class, or the function's own class)
 * and the SHA-256 of its class file, so a node can refuse to run a function whose class it
 * holds with other bytes than the driver: the lambda would resolve to whatever method of that
 * name the node's class has. Computed once per function class on the driver (a
 * {@link ClassValue}, which lets the class unload) and once per class and session on a node.
 * Immutable.
 *
 * @param className the class's binary name
 * @param sha256 the digest of its class file as its class loader finds it, or empty if none
 * @param holder the class itself, on the driver (to ship its code to a node that lacks it);
 *     null in a fingerprint read from the wire
 */
record CodeFingerprint(String className, byte[] sha256, Class<?> holder) {

    /** Per function class; filled at its first function, since a lambda's holder is found from an instance. */
    private static final ClassValue<AtomicReference<CodeFingerprint>> BY_FUNCTION_CLASS = new ClassValue<>() {
        @Override
        protected AtomicReference<CodeFingerprint> computeValue(Class<?> type) {
            return new AtomicReference<>();
        }
    };

    /** The fingerprint of the code of {@code fn}, a task function. */
    static CodeFingerprint of(Serializable fn) {
        AtomicReference<CodeFingerprint> known = BY_FUNCTION_CLASS.get(fn.getClass());
        CodeFingerprint print = known.get();
        if (print == null) {
            Class<?> holder = codeClass(fn);
            print = new CodeFingerprint(holder.getName(), digest(holder), holder);
            known.set(print);
        }
        return print;
    }

    private static Class<?> codeClass(Serializable fn) {
        Class<?> type = fn.getClass();
        if (!type.isHidden()) {
            return type;
        }
        SerializedLambda lambda = SerializedLambdas.of(fn);
        if (lambda == null) {
            return type;
        }
        try {
            return Class.forName(lambda.getCapturingClass().replace('/', '.'), false, type.getClassLoader());
        } catch (ClassNotFoundException e) {
            return type;
        }
    }

    private static byte[] digest(Class<?> type) {
        String resource = "/" + type.getName().replace('.', '/') + ".class";
        try (InputStream in = type.getResourceAsStream(resource)) {
            if (in == null) {
                return new byte[0];
            }
            return MessageDigest.getInstance("SHA-256").digest(in.readAllBytes());
        } catch (IOException | NoSuchAlgorithmException e) {
            return new byte[0];
        }
    }

    /**
     * Checks on a node that the class, as {@code loader} finds it, has the driver's bytes.
     * Returns false if the loader does not find the class (the driver may ship it); throws
     * naming the class and both digests if the bytes differ.
     *
     * @param digests the digests this loader's classes had, by name (the session's cache)
     */
    boolean presentIn(String node, ClassLoader loader, Map<String, byte[]> digests) {
        if (sha256.length == 0) {
            return true; // the driver could not read its own class file: nothing to compare
        }
        byte[] here = digests.get(className);
        if (here == null) {
            try {
                here = digest(Class.forName(className, false, loader));
            } catch (ClassNotFoundException | LinkageError missing) {
                return false;
            }
            digests.put(className, here);
        }
        if (!Arrays.equals(here, sha256)) {
            HexFormat hex = HexFormat.of();
            throw new CroupierException(ErrorCode.BAD_INPUT, "the driver and node " + node
                    + " hold different bytes for class " + className + " (driver sha256 "
                    + hex.formatHex(sha256, 0, 8) + "..., node " + hex.formatHex(here, 0, 8)
                    + "...); give both the same build");
        }
        return true;
    }
}
