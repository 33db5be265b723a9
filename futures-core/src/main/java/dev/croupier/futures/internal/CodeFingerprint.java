package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The class that holds a task's code (a lambda's capturing class, or the function's own class)
 * and the SHA-256 of its class file, so a node can refuse to run a function whose class it
 * holds with other bytes than the driver: the lambda would resolve to whatever method of that
 * name the node's class has. Computed once per class on each side. Immutable.
 *
 * @param className the class's binary name
 * @param sha256 the digest of its class file as its class loader finds it, or empty if none
 */
record CodeFingerprint(String className, byte[] sha256) {

    private static final ConcurrentHashMap<Class<?>, CodeFingerprint> BY_FUNCTION_CLASS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, byte[]> LOCAL = new ConcurrentHashMap<>();

    /** The fingerprint of the code of {@code fn}, a task function. */
    static CodeFingerprint of(Serializable fn) {
        return BY_FUNCTION_CLASS.computeIfAbsent(fn.getClass(), type -> {
            Class<?> holder = codeClass(fn);
            return new CodeFingerprint(holder.getName(), digest(holder));
        });
    }

    private static Class<?> codeClass(Serializable fn) {
        Class<?> type = fn.getClass();
        if (!type.isHidden()) {
            return type;
        }
        try {
            Method writeReplace = type.getDeclaredMethod("writeReplace");
            writeReplace.setAccessible(true);
            SerializedLambda lambda = (SerializedLambda) writeReplace.invoke(fn);
            return Class.forName(lambda.getCapturingClass().replace('/', '.'), false, type.getClassLoader());
        } catch (ReflectiveOperationException | ClassCastException | SecurityException e) {
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
     * Checks on a node that this JVM holds the same bytes for the class as the driver; throws
     * naming the class and both digests if not, or if the class is missing here.
     */
    void check(String node, ClassLoader loader) {
        if (sha256.length == 0) {
            return; // the driver could not read its own class file: nothing to compare
        }
        byte[] here = LOCAL.computeIfAbsent(className, name -> {
            try {
                return digest(Class.forName(name, false, loader));
            } catch (ClassNotFoundException | LinkageError e) {
                return null;
            }
        });
        if (here == null) {
            LOCAL.remove(className);
            throw new CroupierException(ErrorCode.BAD_INPUT, "class " + className + " is not on the class path of node "
                    + node + "; start the node with the driver's classes");
        }
        if (!Arrays.equals(here, sha256)) {
            HexFormat hex = HexFormat.of();
            throw new CroupierException(ErrorCode.BAD_INPUT, "the driver and node " + node
                    + " hold different bytes for class " + className + " (driver sha256 "
                    + hex.formatHex(sha256, 0, 8) + "..., node " + hex.formatHex(here, 0, 8)
                    + "...); give both the same build");
        }
    }
}
